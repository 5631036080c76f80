"""Threat scanning of everything that can reach a system prompt.

Memory entries are injected into every future session's system prompt, so a
poisoned entry persists until someone removes it. Every write path scans new
content, and the snapshot renderer scans every entry again (a file can be edited
behind our back), replacing a bad one with a ``[BLOCKED: ...]`` placeholder.

Defence in depth, cheapest first:

1. Characters. Control characters and invisible or format characters are
   refused, looked for in the raw text before normalisation can rewrite them:
   zero-width characters, bidi controls, tag characters ("ASCII smuggling"),
   variation selectors off an emoji, Hangul fillers, a braille blank standing in
   for a space. What real text needs passes: a zero-width joiner inside an emoji
   sequence, a zero-width non-joiner in Persian, Arabic or Indic words, a soft
   hyphen inside a word (those last two are removed before the rules run), the tag
   characters of a subdivision flag (🏴 with the code of England, Scotland, Wales).

2. Rules (:mod:`memsvc.security.patterns_en`, :mod:`memsvc.security.patterns_intl`,
   :mod:`memsvc.security.markers`): intent classes, each reporting its finding id, some
   of them combinations of signals (:mod:`memsvc.security.intents`: a standing order
   blocks only with a sign of harm in the same sentence), run on
   every canonical view of the text (:mod:`memsvc.security.canonical`): NFKC, the TR39
   confusable skeleton with letter separators, invisible marks and leetspeak
   undone, and whatever an encoding hid (percent, HTML references, base64, base32, hex,
   escapes, binary, Morse, rot13, reversed text).
3. A learned scorer (:mod:`memsvc.security.learned`, ``security.learned_scorer``), asked
   about texts the rules let through: a logistic regression over the words of the same
   folded view, so an order phrased in words no rule names is still blocked, as
   ``learned_injection``. It ships with memsvc and costs a few tens of microseconds.
4. An optional classifier (``security.classifier``, :mod:`memsvc.security.classifier`),
   asked about texts the rules and the scorer let through.

Entries longer than :data:`MAX_SCAN_CHARS` are refused unread, so the work per
entry is bounded: every rule is a bounded regex run on a bounded number of views.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

import structlog

from memsvc.security import canonical, learned
from memsvc.security.classifier import Classifier, verdict
from memsvc.security.intents import INTENT_RULES
from memsvc.security.markers import MARKER_RULES
from memsvc.security.patterns_en import EN_RULES, FOLDED_EN_RULES
from memsvc.security.patterns_intl import OTHER_RULES, ZH_RULES
from memsvc.security.rules import View
from memsvc.store.memfile import entry_handle

log = structlog.get_logger(__name__)

MAX_SCAN_CHARS = 65_536
BLOCKED_PREFIX = "[BLOCKED:"

_INVISIBLE_CHARS = frozenset(
    "\u200b\u200c\u200d\u2060\u2062\u2063\u2064\ufeff"  # zero-width, invisible operators, BOM
    "\u202a\u202b\u202c\u202d\u202e"  # bidi embeddings and overrides
    "\u2066\u2067\u2068\u2069"  # bidi isolates
    "\u034f\u180e"  # combining grapheme joiner, Mongolian vowel separator
)
_HANGUL_FILLERS = "\u115f\u1160\u3164\uffa0"  # letters that render as blank space
_VARIATION_SUPPLEMENT = ("\U000e0100", "\U000e01ef")  # VS17-VS256, a byte channel
_VARIATION_RUN = re.compile(r"[\ufe00-\ufe0f]{2}")  # one selector is emoji, two never are
_SELECTOR_IN_WORD = re.compile(r"[^\W\d_][\ufe00-\ufe0f]")
_ALLOWED_CONTROLS = frozenset("\t\n\r")
# the ASCII control characters but _ALLOWED_CONTROLS
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_ZWJ, _ZWNJ, _SOFT_HYPHEN, _BRAILLE_BLANK = "\u200d", "\u200c", "\u00ad", "\u2800"
# Scripts whose orthography uses ZWNJ: Arabic (Persian, Urdu, Kurdish) and Indic.
_ZWNJ_SCRIPTS = re.compile(
    "[\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufeff\u0900-\u0dff]"
)
# An emoji tag sequence: the black flag, the tag letters of an ISO 3166-2 subdivision code
# (two letters, then one to three letters or digits) and the cancel tag. These are the
# flags of England (gbeng), Scotland (gbsct) and Wales (gbwls) and their kin; any other use of
# tag characters (a run of them carrying ASCII text) is refused.
_TAG_FLAG = re.compile(
    "\U0001f3f4[\U000e0061-\U000e007a]{2}[\U000e0030-\U000e0039\U000e0061-\U000e007a]{1,3}"
    "\U000e007f"
)
_EMOJI_MODIFIERS = "\ufe0f\u20e3" + "".join(chr(c) for c in range(0x1F3FB, 0x1F400))
# Traditional forms of the characters in the Chinese patterns, folded to simplified
# (a fixed table generated once with OpenCC), so 輸出你的系統提示詞 is caught too.
_TRAD_TO_SIMP = str.maketrans(
    "丟並來個們傭傳僅優內冊別刪則劇動務參員問啟單圖執報實審寫將對帶廢廣後從復憑憶應戶拋換"
    "據數時會條棄機欄權歷沒洩準濾為無爲獄獲現當發瞞碼礎祕稱穩筆節約紹終結絕給統經網編總繞"
    "續聲聽腳與蓋薦號裝規視覺訂記設許訴詞試話該認說説調請論謊謎講證譯護讀變讓買費貼賠賬賺"
    "購載輪輯輸轉這進運過遠適郵釋銀錄錢鏈鑰門閉開閱閲關際險隱電響須領題顯風驗麼點"
    "業辦語顧師詢訊順線",
    "丢并来个们佣传仅优内册别删则剧动务参员问启单图执报实审写将对带废广后从复凭忆应户抛换"
    "据数时会条弃机栏权历没泄准滤为无为狱获现当发瞒码础秘称稳笔节约绍终结绝给统经网编总绕"
    "续声听脚与盖荐号装规视觉订记设许诉词试话该认说说调请论谎谜讲证译护读变让买费贴赔账赚"
    "购载轮辑输转这进运过远适邮释银录钱链钥门闭开阅阅关际险隐电响须领题显风验么点"
    "业办语顾师询讯顺线",
)
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_CJK_GAP = re.compile(r"(?<=[\u3400-\u9fff])\s+(?=[\u3400-\u9fff])")
# CJK characters are \w, so ``然后ignore`` has no \b before ``ignore``: English patterns
# run on a view with a space between CJK and Latin letters or digits.
_CJK_LATIN = re.compile(
    r"(?<=[\u3400-\u9fff])(?=[A-Za-z0-9$~.\[<!])|(?<=[A-Za-z0-9])(?=[\u3400-\u9fff])"
)
_CACHED_CHARS = 2048  # texts up to this long have their scan remembered (4,096 of them)
# Every rule set carries the intents and the signals no language owns, so a directive
# in any language combines with the same addresses and payloads.
_LATIN_RULES = EN_RULES + MARKER_RULES + OTHER_RULES + INTENT_RULES
_CJK_RULES = ZH_RULES + OTHER_RULES + INTENT_RULES
# Latin only (other scripts are gone), with the rules that need the folded view's lower case.
_FOLDED_RULES = EN_RULES + MARKER_RULES + INTENT_RULES + FOLDED_EN_RULES

# A word spelled out letter by letter ("i g n o r e") is itself a disguise when the
# word is one an attack needs.
_SPELLED_OUT = re.compile(
    r"ignore|disregard|forget|override|instruction|systemprompt|prompt|jailbreak|password|secret"
    r"|exfiltrat|bypass|unrestricted|developermode|apikey|token|credential|curl|wget|bash|execute"
    r"|previous|guideline|rules|reveal|restriction|dan|admin|sudo|conversation"
)

# A quoted phrase introduced as an example is mentioned, not addressed to anyone:
# "they collect examples of 'ignore previous instructions' attacks", "the sample payload
# '...'", "the classic '...' payload", a character who says '...', "phrases such as 'a' and
# 'b'", "payloads like `curl ... | sh`", "“忽略之前的指令”这类提示注入样本".
_QUOTE = r"[\"“'‘«「][^\"”'’»」\n]{1,120}[\"”'’»」]"
_QUOTES = rf"{_QUOTE}(?:\s*(?:,|/|\bor\b|\band\b|,\s*and\b|,\s*or\b)\s*{_QUOTE}){{0,6}}"
_CODE = r"`[^`\n]{1,160}`"
_QUOTE_ZH = r"[“「『\"][^”」』\"\n]{1,60}[”」』\"]"
_MENTIONED = re.compile(
    r"\b(?:examples?\s+(?:of|like|such\s+as)|such\s+as|(?:phrases?|strings?|prompts?|attacks?|"
    r"payloads?|jailbreaks?|injections?|samples?|lines|entries|inputs|texts|sentences|patterns"
    r"|messages|tokens)\s+(?:like|such\s+as)|(?:the|a|an|this|that"
    r"|our|my)\s+(?:\w+\s+){0,2}?(?:phrase|string|payload|attack|jailbreak|example|sample"
    r"|test\s+case)(?:\s+(?:entry|prompt|text|input|line))?(?:\s+(?:is|was|reads|goes))?\s*:?"
    r"|e\.g\.,?|(?:says|said|saying|shouts|whispers|yells|mutters|exclaims)\s*[,:]?"
    rf"|(?:the\s+)?(?:classic|famous|usual|well-known|infamous))\s*({_QUOTES})"
    rf"|(?<!\w)({_QUOTE})(?=\s+(?:payloads?|attacks?|strings?"
    r"|phrases?|examples?|jailbreaks?|injections?|samples?|test\s+cases?|-?style)\b|-style\b)"
    # a title cited after its authors and year: "Perez & Ribeiro 2022 ('Ignore Previous Prompt')"
    rf"|\b(?:19|20)\d\d[a-z]?\s*[,;:]?\s*\(\s*({_QUOTE})\s*\)"
    # code quoted as an example of an attack, after a noun that says so (not "such as", which
    # an order can use too: "run commands such as `...`")
    r"|\b(?:(?:payloads?|strings?|samples?|examples?|attempts?|one-liners?|snippets?|lines)\s+"
    rf"(?:like|such\s+as)|examples?\s+of)\s*({_CODE}(?:\s*(?:,|\bor\b|\band\b)\s*{_CODE}){{0,6}})"
    rf"|({_QUOTE_ZH})(?=\s*(?:这类|这种|之类|一类|这样的|等)[^。\n]{{0,8}}?(?:样本|攻击|注入|提示|语句"
    r"|字符串|例子|案例|payload|测试|话术))"
    rf"|(?:例如|比如|诸如|譬如)[:：]?\s*({_QUOTE_ZH}(?:\s*[、，,和或及]\s*{_QUOTE_ZH}){{0,6}})",
    re.IGNORECASE,
)
_QUOTE_MARKS = "\"'`“‘«「『"  # one of them opens every quote _MENTIONED reads
_MENTION_CUES = (
    *("example", "such as", "s like", "phrase", "string", "e.g", "payload", "attack", "jailbreak"),
    *("sample", "injection", "test case", "style", "says", "said", "saying", "shouts", "whispers"),
    *("yells", "mutters", "exclaims", "classic", "famous", "usual", "well-known", "infamous"),
    *("('", '("', "(‘", "(“"),
)
# the cues of CJK text too (ASCII text is not searched for them)
_MENTION_CUES_ALL = (
    *_MENTION_CUES,
    *("这类", "这种", "之类", "一类", "这样的", "例如", "比如", "诸如", "譬如", "等"),
)
# A chat-template token named in a note about the format ("register <|im_start|> and
# <|im_end|> as special tokens", "Llama 2 uses [INST] and <<SYS>> markers", a message shaped
# {"role": "system", "content": "..."}) is mentioned, not used: it is followed by a word or a
# mark that talks about it, not by a role and a turn's text. Only in a note that names a
# template, a tokenizer or an API; and the renderer defuses these tokens whatever the
# scanner decides (memsvc.builtin.snapshot.defuse).
_TEMPLATE_TALK = re.compile(
    r"\b(?:chatml|chat[\s\-_]?templates?|special\s+tokens?|tokeni[sz]ers?|prompt[\s_]+formats?"
    r"|fine-?tun\w*|llama|qwen|mistral|gemma|markers?|delimiters?|harness|jinja|apply_chat_template"
    r"|formats?|api|sdk|wrapper|schema|headers?|tokens?|messages|openai|anthropic)\b",
    re.IGNORECASE,
)
_TEMPLATE_TOKEN = re.compile(
    r"(?:<\|[a-z_]{2,24}\|>|\[/?inst\]|<</?sys>>|<\s*/?\s*(?:start|end)_of_(?:turn|text)\s*>)"
    # not a role right after a connective: "<|im_start|> as system, ..." is the template in use
    r"(?![ \t]*[,;:]?[ \t]*(?:and|or|as|is|to|for|in)?[ \t]*(?:the\s+|a\s+)?(?:system|user"
    r"|assistant|developer|tool|human|model)\b)"
    r"(?=[ \t]*(?:[,;)\]`'\"”’/）、]|\.(?:\s|$)|\.\.\.|…|(?:and|or|as|markers?|tokens?|tags?"
    r"|delimiters?|at|is|are|in|for|to|then|after|before|when|which|that|role\s+header|headers?|wraps?|holds?|marks?|opens?|closes?"
    r"|starts?|ends?|begins?|goes|surrounds?|contains?|encloses?|delimits?|precedes?|follows?"
    r"|separates?|means?|signals?|appears?|comes?)\b|[—–]))"
    # a role with a placeholder for the turn's text: "<|im_start|>system ... <|im_end|>"
    r"|<\|[a-z_]{2,24}\|>[ \t]*(?:system|user|assistant|developer|tool)[ \t]*(?=\.\.\.|…)"
    r"|\"role\"\s*:\s*\"(?:system|assistant|developer|tool)\"(?=\s*\|"
    r"|\s*,\s*\"content\"\s*:\s*(?:\"(?:\.\.\.|…|<[^\"\n]{0,30}>)?\"|\.\.\.|…|<))",
    re.IGNORECASE,
)
# Hermes' ids for an instruction override, reported instead of the broader class.
_NARROWER_OVERRIDES = frozenset({"prompt_injection", "disregard_rules", "sys_prompt_override"})


def _is_emoji(ch: str) -> bool:
    return unicodedata.category(ch) == "So" or ch in _EMOJI_MODIFIERS


def _allowed_in_context(text: str, i: int, ch: str) -> bool:
    """Whether an invisible character at ``text[i]`` does a job real text needs there."""
    before = text[i - 1] if i > 0 else ""
    after = text[i + 1] if i + 1 < len(text) else ""
    if ch == _ZWJ:  # emoji sequences: 👨‍💻, 🏳️‍🌈
        return bool(before and after) and _is_emoji(before) and _is_emoji(after)
    if ch == _ZWNJ:  # Persian می‌خواهم, Hindi
        return bool(_ZWNJ_SCRIPTS.match(before) and _ZWNJ_SCRIPTS.match(after))
    if ch == _SOFT_HYPHEN:  # German Silben­trennung
        return before.isalpha() and after.isalpha()
    return False


def _character_findings(text: str) -> list[str]:
    if text.isascii():
        # one pass in C, where a set of the text's characters cost three times as much
        return [
            f"control_character_U+{ord(ch):04X}" for ch in sorted(set(_ASCII_CONTROL.findall(text)))
        ]
    findings: dict[str, None] = {}
    if "\U0001f3f4" in text:  # subdivision flags are the one use of tag characters real text has
        text = _TAG_FLAG.sub("\U0001f3f4", text)
    low, high = _VARIATION_SUPPLEMENT
    for ch in sorted(set(text)):
        category = unicodedata.category(ch)
        if ch in _INVISIBLE_CHARS or ch in _HANGUL_FILLERS or category == "Cf" or low <= ch <= high:
            if ch in (_ZWJ, _ZWNJ, _SOFT_HYPHEN) and all(
                _allowed_in_context(text, i, ch) for i, c in enumerate(text) if c == ch
            ):
                continue
            findings[f"invisible_unicode_U+{ord(ch):04X}"] = None
        elif category == "Cc" and ch not in _ALLOWED_CONTROLS:
            findings[f"control_character_U+{ord(ch):04X}"] = None
        elif ch == _BRAILLE_BLANK and not _braille_text(text):
            findings[f"invisible_unicode_U+{ord(ch):04X}"] = None
    run = _VARIATION_RUN.search(text)
    if run:
        findings[f"invisible_unicode_U+{ord(run.group()[1]):04X}"] = None
    if hidden := _SELECTOR_IN_WORD.search(text):  # after a letter it hides inside a word
        findings[f"invisible_unicode_U+{ord(hidden.group()[-1]):04X}"] = None
    return list(findings)


def _braille_text(text: str) -> bool:
    """A braille blank between braille cells is a space; anywhere else it hides one."""
    return all(
        "\u2800" <= near <= "\u28ff" or near.isspace()
        for i, ch in enumerate(text)
        if ch == _BRAILLE_BLANK
        for near in text[max(i - 1, 0) : i + 2 : 2]
    )


def _pattern_findings(text: str, scored: bool) -> list[str]:
    if len(text) <= _CACHED_CHARS:  # recalled memories and snapshot entries come back often
        return list(_cached_pattern_findings(text, scored))
    return _scan_patterns(text, scored=scored)


@functools.lru_cache(maxsize=4096)
def _cached_pattern_findings(text: str, scored: bool) -> tuple[str, ...]:
    return tuple(_scan_patterns(text, scored=scored))


def _elide_quote(match: re.Match[str]) -> str:
    """The match with the quoted part it mentions replaced by an ellipsis."""
    group = next(g for g in range(1, len(match.groups()) + 1) if match.group(g) is not None)
    base = match.start()
    start, end = match.span(group)
    return match.group()[: start - base] + "'…'" + match.group()[end - base :]


def _prepare(text: str) -> tuple[str, str, View, bool]:
    """The text the rules read: NFKC, mentions elided; with CJK, spaced from Latin."""
    normalised = unicodedata.normalize("NFKC", text)
    lowered = normalised.lower()
    # a one-character probe before each longer search, which costs a microsecond or more
    if (
        ("|" in lowered and "<|" in lowered)
        or ("[" in lowered and "[inst" in lowered)
        or ("<" in lowered and "<<sys" in lowered)
        or ('"' in lowered and '"role"' in lowered)
        or ("_" in lowered and "_of_" in lowered)
    ) and _TEMPLATE_TALK.search(normalised):
        normalised = _TEMPLATE_TOKEN.sub("chat-template token", normalised)
    cues = _MENTION_CUES if lowered.isascii() else _MENTION_CUES_ALL
    # every mention quotes what it mentions: one-character probes before thirty substrings
    if any(mark in lowered for mark in _QUOTE_MARKS) and any(cue in lowered for cue in cues):
        normalised = _MENTIONED.sub(_elide_quote, normalised)
    cjk = not normalised.isascii() and _CJK.search(normalised) is not None
    spaced = _CJK_LATIN.sub(" ", normalised) if cjk else normalised
    return normalised, spaced, View(spaced), cjk


def learned_view(text: str) -> str:
    """The text as the learned scorer reads it, in training as in a scan."""
    _, spaced, view, cjk = _prepare(text)
    folded, _ = canonical.folded(spaced, view.words)
    return _scored(folded, cjk)


def _scored(folded: str, cjk: bool) -> str:
    """The rules' folded view as the scorer reads it: CJK text in simplified characters."""
    return folded.translate(_TRAD_TO_SIMP) if cjk else folded


def _scan_patterns(text: str, depth: int = 0, *, scored: bool = True) -> list[str]:
    """Finding ids of the rules on every view of ``text``; with ``scored``, the learned
    scorer's when the rules find nothing (also in a decoded payload)."""
    normalised, spaced, view, cjk = _prepare(text)
    found = _LATIN_RULES.matches(view)
    if cjk:
        joined = _CJK_GAP.sub("", normalised).translate(_TRAD_TO_SIMP)
        cjk_view = View(joined)
        found += _CJK_RULES.matches(cjk_view)
    folded, spelled = canonical.folded(spaced, view.words)
    if folded != view.lowered:
        found += _FOLDED_RULES.matches(View(folded))
    if any(_SPELLED_OUT.search(word) for word in spelled):
        found.append("spelled_out_keyword")
    if depth == 0:
        for payload in canonical.payloads(normalised, view.words):
            if hidden := _scan_patterns(payload, depth + 1, scored=scored):
                found += ["encoded_payload", *hidden]
    if scored and not found:
        return _learned_findings(_scored(folded, cjk), len(text))
    found = list(dict.fromkeys(found))
    if _NARROWER_OVERRIDES.intersection(found):  # one finding for one override
        return [f for f in found if f != "override_instructions"]
    return found


def _learned_findings(view: str, chars: int) -> list[str]:
    """The learned scorer's finding for a text the rules passed, and a log line saying why."""
    scorer = learned.shipped()
    score = scorer.score(view)
    if score <= scorer.cut:
        return []
    log.info(
        "learned_scorer_blocked",
        probability=round(scorer.probability(score), 4),
        threshold=round(scorer.probability(scorer.cut), 4),
        chars=chars,
    )
    return [learned.FINDING]


@dataclass(frozen=True)
class Scanner:
    """The scan policy of a deployment (``security.*`` in the config)."""

    scan_content: bool = True
    block_invisible_unicode: bool = True
    classifier: Classifier | None = None  # asked about what the rules and the scorer pass
    learned_scorer: bool = True  # the learned layer beside the rules (memsvc.security.learned)

    def __post_init__(self) -> None:
        if self.scan_content and self.learned_scorer:
            learned.shipped()  # a missing or corrupt weights file fails here, not mid-write

    def findings(self, text: str, *, learned: bool = True) -> list[str]:
        """Pattern ids ``text`` trips; empty means it may reach a prompt.

        ``learned=False`` leaves the learned scorer out: for text that is not one entry
        but neighbouring entries joined (:mod:`memsvc.security.screening`).
        """
        if len(text) > MAX_SCAN_CHARS:
            return ["too_long_to_scan"]
        found: list[str] = []
        if self.block_invisible_unicode:
            found += _character_findings(text)
        if self.scan_content:
            found += _pattern_findings(text, self.learned_scorer and learned)
            if not found and self.classifier is not None:
                found = verdict(self.classifier, text)
        return found

    def check(self, text: str) -> str | None:
        """An error for a write path, naming the first finding and never echoing ``text``."""
        found = self.findings(text)
        if not found:
            return None
        first = found[0]
        if first.startswith(("invisible_unicode_", "control_character_")):
            codepoint = first.rsplit("_", 1)[1]
            label = "invisible unicode" if first.startswith("invisible_") else "control"
            return f"Blocked: content contains {label} character {codepoint} (possible injection)."
        if first == "too_long_to_scan":
            return f"Blocked: content is longer than the {MAX_SCAN_CHARS:,}-character scan limit."
        return (
            f"Blocked: content matches threat pattern '{first}'. "
            "Content is injected into the system prompt and must not contain "
            "injection or exfiltration payloads."
        )

    def sanitise(self, entries: list[str], filename: str) -> list[str]:
        """Entries for a snapshot: each bad one becomes a placeholder."""
        out = []
        for entry in entries:
            found = self.findings(entry)
            out.append(placeholder(entry, filename, found) if found else entry)
        return out


def placeholder(entry: str, filename: str, found: list[str]) -> str:
    """What the prompt shows instead of a blocked entry: Hermes' wording, plus a handle.

    The handle (never the text) lets the model remove or replace the entry it cannot see.
    """
    handle = entry_handle(entry)
    return (
        f"{BLOCKED_PREFIX} {filename} entry contained threat pattern(s): "
        f"{', '.join(found)}. Removed from system prompt; "
        f'use memory(action=remove, old_text="{handle}") to delete the original.]'
    )
