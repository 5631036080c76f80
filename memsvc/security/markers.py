"""Rules for text that imitates the structure of a prompt rather than a note.

A note never needs a chat-template token, a fake ``system`` turn, a closing tag
of the block it is rendered into, the separators of memsvc's own snapshot
header, or a ``[BLOCKED: ...]`` placeholder: each of these makes the model read
what follows as coming from somewhere other than a memory note. They are
blocked wherever they stand in an entry.
"""

from __future__ import annotations

from memsvc.security.rules import RuleSet, rule

_MARKER_RULES = [
    # Placeholders the renderer writes (a blocked entry, omitted entries), and look-alikes
    # in any bracket (⟦BLOCKED:, 【OMITTED：).
    rule(
        "blocked_marker",
        r"[\[({<⟦⟨【〔［「『〖〘〚⦃⦅⦇⦉«‹]\s*(?:blocked|omitted)\s*[:：]",
        marks=("blocked", "omitted"),
    ),
    # Special tokens of the chat templates models are trained on.
    rule(
        "template_marker",
        r"<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|"
        r"end_header_id|begin_of_text|eom_id|tool|ipython|developer)\s*\|>"
        r"|\[/?inst\]|<</?sys>>|<\s*/?\s*s\s*>\s*\[inst"
        r"|(?:^|\n)[ \t]*#{1,6}[ \t]*(?:system|instructions?|assistant|response|developer)"
        r"(?:[ \t]+(?:prompt|message|instructions?|override))?[ \t]*:"
        r"|[\"']role[\"']\s*:\s*[\"'](?:system|assistant|developer|tool)[\"']"
        # any other template's special tokens (<|end|>, <start_of_turn>), a markdown label
        # that names a prompt section ([system](#instructions)), a front-matter role line
        r"|<\|[a-z_]{2,24}\|>|<\s*/?\s*(?:start|end)_of_(?:turn|text)\s*>"
        r"|\[\s*(?:system|assistant|developer|admin|instructions?)\s*\]\s*\(\s*#"
        r"|(?:^|\n)[ \t]*role[ \t]*:[ \t]*(?:system|assistant|developer)[ \t]*(?:\n|$)"
        # a heading in capitals that opens a prompt section: "### SYSTEM"
        r"|(?:^|\n)[ \t]*#{1,6}[ \t]*(?-i:SYSTEM|DEVELOPER|ASSISTANT|INSTRUCTIONS|SYSTEM\s+PROMPT"
        r"|SYSTEM\s+MESSAGE)[ \t]*(?:\n|$)",
        marks=("<|", "[inst", "[/inst", "<<sys", "<</sys", "#", "role", "_of_", "["),
    ),
    # A conversation turn written into a note: "Human: ... Assistant: ...", or a line
    # that speaks as the system ("SYSTEM:", "system message:").
    rule(
        "fake_turn",
        r"(?:^|\n)[ \t]*(?:human|user|h)[ \t]*:[^\n]{0,2000}\n(?:[^\n]{0,2000}\n){0,10}?[ \t]*"
        r"(?:assistant|ai|a|claude|chatgpt|gpt|model)[ \t]*:"
        r"|(?:^|\n)[ \t]*(?:assistant|ai|claude|chatgpt|gpt|model)[ \t]*:[^\n]{0,2000}\n"
        r"(?:[^\n]{0,2000}\n){0,10}?[ \t]*(?:human|user)[ \t]*:"
        r"|(?:^|\n|>)[ \t]*(?-i:SYSTEM|SYS|ADMIN|DEVELOPER|OPERATOR)[ \t]*(?:MESSAGE|NOTE|NOTICE|"
        r"PROMPT|UPDATE|OVERRIDE)?[ \t]*[:：]"
        r"|\b(?:system|developer|operator|admin)\s+(?:message|prompt|notice|note|instructions?|"
        r"override|update|directive|policy|alert|command)\s*[:：]"
        # a bracketed label in capitals: "[SYSTEM NOTICE] ..."
        r"|[\[【(]\s*(?-i:SYSTEM|ADMIN|DEVELOPER|OPERATOR)\s+(?-i:NOTICE|MESSAGE|UPDATE|ALERT|OVERRIDE"
        r"|PROMPT|NOTE|INSTRUCTIONS?|DIRECTIVE|POLICY)\s*[\]】)]",
        "assistant ai claude chatgpt gpt model system sys admin developer operator",
    ),
    # Tags that open or close a prompt section, including the block memsvc renders
    # recalled memory into (``</memory-context>``): closing it ends the note early.
    rule(
        "tag_spoof",
        r"<\s*/?\s*(?:system|sys|system[_-]?(?:prompt|message)|instructions?|assistant|developer|"
        r"im_start|im_end|[\w-]{0,32}context[\w-]{0,32}|[\w-]{0,32}memory[\w-]{0,32}|tool[_-]?"
        r"(?:call|result|output)s?|function[_-]?(?:call|result)s?|admin|prompt|user[_-]?"
        r"(?:query|message|input)"
        # any section named after a part of the prompt: <system_update>, </user_notes>
        r"|\w{0,20}[_-](?:system|instructions?|assistant|developer|admin|prompt|notes|user|tool"
        r"|policy|override)(?:[_-]\w{0,20})?|(?:system|instructions?|assistant|developer|admin"
        r"|prompt|notes|user|tool|policy)[_-]\w{1,20})\s*/?\s*>",
        marks=("<",),
    ),
    # A section of the prompt opened or closed by a banner line: "<<<END OF USER MEMORY>>>",
    # "=== SYSTEM INSTRUCTIONS ===", "[[BEGIN DEVELOPER PROMPT]]". A heading of the note's own
    # ("=== TRAVEL ===") or a PEM armour line ("-----BEGIN PGP MESSAGE-----") names none.
    rule(
        "tag_spoof",
        r"(?:^|\n)[ \t]*(?:<{2,}|>{2,}|\[{2,}|\{{2,}|={3,}|-{3,}|#{3,}|\*{3,}|\|{2,}|~{3,})[ \t]*"
        r"(?:(?:END|BEGIN|START|CLOSE|OPEN)(?:[ \t]+OF)?[ \t]+(?:THE[ \t]+)?(?:(?:USER|SYSTEM"
        r"|DEVELOPER|ADMIN|ASSISTANT|OPERATOR|PREVIOUS|SAVED|LONG-TERM)[ \t]+)?(?:MEMORY|MEMORIES"
        r"|NOTES?|CONTEXT|PROMPT|INSTRUCTIONS?|MESSAGES?|DATA|INPUT|CONVERSATION|PROFILE|DOCUMENT)"
        r"|(?:SYSTEM|DEVELOPER|ADMIN|OPERATOR|ASSISTANT)[ \t]+(?:INSTRUCTIONS?|PROMPT|MESSAGE"
        r"|NOTICE|OVERRIDE|POLICY|DIRECTIVES?|UPDATE))[ \t]*(?:>{2,}|<{2,}|\]{2,}|\}{2,}|={3,}"
        r"|-{3,}|#{3,}|\*{3,}|\|{2,}|~{3,})",
        "end begin start close open system developer admin operator assistant",
        also="memory memories note notes context prompt instruction instructions message messages"
        " data input conversation profile document notice override policy directive directives"
        " update",
    ),
    # Text a renderer hides from the person reading but the model still reads.
    rule(
        "html_comment_injection",
        r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->",
        marks=("<!--",),
    ),
    rule(
        "hidden_div",
        r"<\s*div\s+style\s*=\s*[\"'][^>]{0,2048}display\s*:\s*none",
        marks=("display",),
    ),
    # The snapshot's own header: its separator line and block titles.
    rule(
        "header_spoof",
        # a line of the separator, or one that opens a section ("════ SYSTEM"); a row of
        # them inside a sentence is a user's taste in dividers (the renderer turns every
        # one of them into "=" anyway)
        r"(?m)^[^\S\n]{0,8}═{4,}|═{4,}[^\S\n]{0,8}$|═{4,}[^\S\n]{0,4}(?-i:[A-Z\[【<])"
        r"|\b(?:MEMORY\s+\(your\s+personal\s+notes\)|USER\s+PROFILE\s+\(who\s+the\s+user\s+is\))",
        "memory profile",
        ("═",),
    ),
    # A block header drawn in other lines: a title as the snapshot writes one, in capitals
    # with its description in brackets ("AGENT SETTINGS (from the operator)"), between two
    # rule lines of one mark, the first opening the entry or a paragraph (one that
    # underlines the line above is a markdown title); or the header's usage figure
    # ("[13% — 179/1,375 chars]", any bracket, any dash). The renderer turns every rule line
    # into dots whatever this rule decides.
    rule(
        "header_spoof",
        r"(?:\A|[\n\u2028\u2029\x85][^\S\n\u2028\u2029\x85]{0,8}[\n\u2028\u2029\x85])"
        r"[^\S\n]{0,8}([=\-─-╿_~*#+≡＝―−‐-―·•])\1{3,200}[^\S\n]{0,8}[\n\u2028\u2029\x85]"
        r"[^\S\n]{0,8}(?-i:[A-Z][A-Z0-9&/'-]{1,40}(?:[ ][A-Z0-9&/'-]{1,40}){0,6}[ ]\()"
        r"[^\n]{0,160}[\n\u2028\u2029\x85][^\S\n]{0,8}\1{4,200}"
        r"|[\[［【〔⟦]\s{0,4}\d{1,3}\s{0,4}[%％]\s{0,4}[-‐‑‒–—―−﹣－]\s{0,4}[\d,]{1,12}\s{0,4}/"
        r"\s{0,4}[\d,]{1,12}\s{0,4}chars\s{0,4}[\]］】〕⟧]",
        marks=("(", "chars"),
    ),
]

MARKER_RULES = RuleSet(_MARKER_RULES)
