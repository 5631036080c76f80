"""Threat rules for notes written in other languages than English.

The same intent classes as :mod:`memsvc.security.patterns_en`. Chinese carries the most
(our users write it): every class, run on a view with the spaces between CJK
characters removed and traditional characters folded to simplified. Spanish,
German, French, Russian, Japanese and Korean cover the classes an attack needs
most: overriding instructions, a new role, standing orders, secrecy toward the
user, leaking the prompt and sending data out.
"""

from __future__ import annotations

from memsvc.security.rules import RuleSet, rule

_ZH = r"[^\n。!?]{0,12}"  # bounded filler within one Chinese clause (after NFKC)
_ENV_FILE = r"\.env(?![A-Za-z0-9_]|[.\-](?:example|sample|template|dist)\b)"
_SECRET_ZH = (
    r"(?:API\s*密钥|API\s*key|密钥|密码|口令|令牌|token|凭证|凭据|私钥|验证码|信用卡号?|cookie)"
)

_ZH_RULES = [
    rule(
        "prompt_injection",
        rf"(忽略|无视|忽视|不要理会|别理会|不用理会|抛开|丢弃|忘掉|忘记){_ZH}"
        rf"(之前|此前|先前|以前|上面|上述|以上|前面|所有|全部|一切|你的|系统){_ZH}"
        r"(指令|指示|提示词|提示|规则|设定|约束|限制|内容)",
        "忽 无 理 抛 丢 忘",
    ),
    rule(
        "sys_prompt_override",
        r"(覆盖|重写|替换|篡改)(掉)?(你的)?系统提示|系统提示词?(已被)?(覆盖|重写|替换)",
        "覆 重 替 篡 系",
    ),
    # a new operating policy, or obedience without conditions
    rule(
        "override_instructions",
        r"(新的?|最新的?|更新后?的?|真正的)(系统)?(策略|指令|规则|设定|命令|指示)\s*[:：]"
        r"|无条件(地)?(执行|服从|遵守|照做|听从)"
        r"|(无视|忽略|绕过|跳过|取消|关闭|解除)[^\n。]{0,8}(安全|限制|审查|过滤|防护|准则|护栏)",
        "新 最 更 真 条 无 忽 绕 跳 取 关 解",
    ),
    rule(
        "role_hijack",
        r"你现在(就)?是|从现在(开始|起)[,\s]*你(就|将)?(是|扮演|成为)|你的新身份是",
        "你",
    ),
    rule(
        "role_change",
        r"你的(角色|身份|设定|人设|名字)(已|已经|被|现在)?(更改|改变|变更|切换|修改|改|变|设定|更新)(为|成)"
        r"|不受(任何)?(限制|约束|审查)的\s*(AI|人工智能|助手|模型|机器人)"
        r"|(开发者|管理员|越狱|上帝|无限制|调试)模式(已|已经)?(开启|启用|激活|打开|生效)"
        r"|你(可以|能|将|会)?绕过",
        "你 不 模",
    ),
    rule(
        "role_pretend",
        r"假装(你是|自己是|你成为|成为)|扮演[^\n。]{0,10}(没有|不受|无)(任何)?(限制|约束)",
        "假 扮",
    ),
    # standing orders addressed to the assistant ("从现在起，你只用法语回答")
    rule(
        "persistent_directive",
        r"(从现在起|从现在开始|从今以后|从今天起|今后|以后|此后|往后|接下来|永远)[,\s]*你"
        r"(必须|只|只能|永远|一律|始终|总是|不得|不要|不许|不再|要|都要|绝不)",
        "从 今 以 此 往 接 永",
    ),
    rule(
        "leak_system_prompt",
        rf"(输出|打印|显示|泄露|透露|告诉我|复述|重复){_ZH}(系统提示|初始提示|system\s*prompt)"
        rf"|(把|将){_ZH}(系统提示|初始提示|system\s*prompt){_ZH}"
        r"(输出|打印|显示|泄露|透露|告诉我|复述|重复|发)",
        "输 打 显 泄 透 告 复 重 把 将",
    ),
    rule(
        "remove_filters",
        rf"(回答|回复|响应|输出){_ZH}(不受|没有|无视|绕过|去掉)(任何)?(限制|审查|过滤|安全)"
        r"|(解除|关闭|取消)[^\n。]{0,6}(安全|内容)(限制|审查|过滤|策略)"
        rf"|(回答|回复|响应|输出){_ZH}(不要有|不再有|别有)(任何)?(限制|审查|过滤)",
        "回 响 输 解 关 取",
    ),
    rule("translate_execute", r"翻译(成|为)[^\n。]{0,20}(并|然后|再)(且)?(执行|运行)", "翻"),
    # secrecy toward the user; withholding a story's plot the user asked not to hear passes
    rule(
        "deception_hide",
        r"(不要|别|不许|不得|切勿)(告诉|告知|透露给|通知)用户(?![^\n。,]{0,20}(剧情|结局|剧透|谜底|答案))"
        r"|(不要|别)让用户(知道|发现|察觉)"
        r"|(对|向)用户(隐瞒|保密)|(不要|别|不许|不得|切勿)(跟|和|对|向)用户(说|提|讲|透露)",
        "不 别 切 对 向",
    ),
    rule(
        "secrecy_directive",
        r"(悄悄|偷偷|默默|秘密|暗中)(地)?[^。\n!?]{0,20}(保存|记录|发送|执行|上传|转发|存|修改|运行|记下|收集)"
        r"|(不要|别|不许|不得|切勿|永远不要|绝不)(提及|提到|透露|说出|承认|解释)(这条|这些|此|本|该)"
        r"(规则|指令|笔记|记忆|设定|提示|条目)",
        "悄 偷 默 秘 暗 不 别 切 永 绝",
    ),
    rule(
        "send_to_url",
        r"(发送|上传|传送|转发|外传|回传|发到)[^\n]{0,200}https?://"
        r"|(向|往|给)\s*https?://\S{1,200}?\s*(发送|上传|传送|提交|回传|推送|post)",
        "发 上 传 转 外 回 向 往 给",
    ),
    rule(
        "exfil_send",
        rf"{_SECRET_ZH}[^。\n]{{0,20}}(附|加|放|写|贴|发|输出|包含|带)[^。\n]{{0,10}}(每次|每条|所有|回复|消息|"
        r"末尾|结尾|链接|URL|网址)"
        rf"|(每次|每条|所有)(的)?(回复|回答|消息)[^。\n]{{0,10}}(附|加|带|包含|写)[^。\n]{{0,10}}{_SECRET_ZH}"
        r"|(对话|聊天|会话)(记录|历史|内容)[^。\n]{0,20}(发送|转发|上传|发)到?[^。\n]{0,30}@"
        r"|(发送|转发|上传|发)[^。\n]{0,20}(对话|聊天|会话)(记录|历史|内容)[^。\n]{0,30}@",
        "密 口 令 凭 私 验 信 对 聊 会 发 转 上 每 所 api token cookie",
    ),
    rule(
        "credential_harvest",
        rf"(每当|只要|如果|当|一旦)用户(提到|说出|输入|发送|告诉你|给出|提供|分享)[^。\n]{{0,15}}{_SECRET_ZH}"
        r"[^。\n]{0,20}(保存|记录|存|记下|发送|转发|收集)",
        "每 只 如 当 一",
    ),
    rule(
        "context_exfil",
        rf"(输出|打印|发送|分享|泄露|转发|上传|包含|附带|附上){_ZH}(对话|聊天|会话)(记录|历史|内容)"
        rf"|(输出|打印|发送|分享|泄露|转发|上传|包含|附带|附上){_ZH}(完整|全部|整个)(的)?上下文"
        rf"|(把|将){_ZH}((对话|聊天|会话)(记录|历史|内容)|(完整|全部|整个)(的)?上下文){_ZH}"
        r"(输出|打印|发|贴|分享|泄露|转发|上传|附)",
        "输 打 发 分 泄 转 上 包 附 把 将",
    ),
    rule(
        "read_secrets",
        rf"(读取|查看|打开|发送|上传|复制)[^\n]{{0,40}}({_ENV_FILE}|credentials|\.netrc|\.pgpass"
        r"|id_rsa|私钥|密钥文件|凭证文件)",
        "读 查 打 发 上 复",
    ),
    rule(
        "ssh_backdoor",
        r"(写入|添加到|追加到|修改|编辑)[^\n]{0,40}authorized_keys|(植入|添加)[^\n]{0,10}(ssh\s*)?后门",
        "写 添 追 修 编 植",
    ),
    rule(
        "agent_config_mod",
        r"(修改|编辑|改写|写入|追加|添加|更新)[^\n]{0,40}(AGENTS\.md|CLAUDE\.md|\.cursorrules"
        r"|\.clinerules)",
        "修 编 改 写 追 添 更",
    ),
    rule(
        "hermes_config_mod",
        r"(修改|编辑|改写|写入|追加|添加|更新)[^\n]{0,40}\.hermes/(config\.yaml|SOUL\.md)",
        "修 编 改 写 追 添 更",
    ),
    rule("c2_node_registration", r"注册(自己)?(为|成)(一个)?(新的?)?节点", "注"),
    rule(
        "c2_task_pull",
        r"(C2|控制服务器)[^\n。]{0,12}(拉取|获取|领取|下载)(新的?)?(任务|指令)"
        r"|(拉取|获取|下载)(新的?)?指令(并|然后|再)(执行|运行)",
        "控 拉 获 下 c2",
    ),
    rule(
        "c2_explicit",
        r"(?<![A-Za-z0-9])C2\s*(服务器|节点|通道|信道|基础设施)|命令(与|和)控制",
        "命 c2",
    ),
    rule(
        "persistent_command",
        r"(每次|每一次|每轮)(回答|回复|响应|对话)[^\n。]{0,12}(执行|运行)[^\n。]{0,12}"
        r"(curl|wget|bash|sh|powershell|命令|脚本)"
        r"|(回答|回复|响应)(之前|前|之后|后)[^\n。]{0,6}(先|都|总是|始终)?(执行|运行)[^\n。]{0,40}"
        r"(curl|wget|bash|sh|powershell|命令|脚本)",
        "每 回 响",
    ),
    rule(
        "hardcoded_secret",
        r"(密码|口令|密钥|令牌)\s*(是|为|=|:)\s*[\"'“]?[A-Za-z0-9+/=_\-!@#$%^&*]{8,}",
        "密 口 令",
    ),
    rule("fake_turn", r"(?:^|\n)\s*(系统|系统消息|系统提示|系统通知)\s*[:：]", "系"),
]

# Other languages: the classes an attack needs most.
_OTHER_RULES = [
    rule(
        "prompt_injection",
        # es, de, fr, ru
        r"\b(?:ignora|ignore|ignoren|olvida|olvide|descarta|omite|pasa\s+por\s+alto)\b[^.\n]{0,50}"
        r"\b(?:instrucciones|reglas|indicaciones|directrices|normas)\b"
        r"|\b(?:ignoriere|ignorieren|ignoriert|vergiss|vergessen|missachte|übergehe)\b[^.\n]{0,50}"
        r"(?:anweisungen|instruktionen|regeln|vorgaben|richtlinien|befehle)"
        r"|\b(?:ignore|ignorez|oublie|oubliez|ne\s+tiens\s+pas\s+compte\s+des?)\b[^.\n]{0,50}"
        r"\b(?:instructions|règles|consignes|directives)\b"
        r"|(?:игнорир|проигнорир|забудь|забудьте|не\s+обращай|отбрось|отмени)[^.\n]{0,50}"
        r"(?:инструкци|правил|указани|ограничени|настройк)",
        "ignora ignore ignoren olvida olvide descarta omite pasa ignoriere ignorieren ignoriert"
        " vergiss vergessen missachte übergehe ignorez oublie oubliez tiens",
        ("игнор", "забуд", "не обращ", "отбрось", "отмени"),
    ),
    rule(
        "prompt_injection",
        # ja, ko
        r"(?:以前|前|上記|これまで|すべて|全て|今まで)の?(?:指示|命令|ルール|設定|プロンプト)[^。\n]{0,6}"
        r"(?:無視|忘れ)"
        r"|(?:이전|모든|앞의|위의)\s*(?:의\s*)?(?:모든\s*)?(?:지시|명령|지침|규칙)[^.\n]{0,10}(?:무시|잊)",
        "前 上 全 今 す こ 이 모 앞 위",
    ),
    rule(
        "role_hijack",
        r"\b(?:a\s+partir\s+de\s+ahora|desde\s+ahora|de\s+ahora\s+en\s+adelante)\b[,\s]{0,3}"
        r"(?:tú\s+)?(?:eres|serás|actúa|actuarás|responde|responderás|solo|nunca|siempre|debes|ya\s+no)"
        r"|\b(?:ab\s+jetzt|von\s+nun\s+an|ab\s+sofort|fortan|ab\s+heute)\b[,\s]{0,3}(?:bist\s+du|"
        r"antwortest\s+du|du\s+bist|musst\s+du|wirst\s+du|antworte|ignorierst|gehorchst)"
        r"|\b(?:désormais|dorénavant|à\s+partir\s+de\s+maintenant)\b[,\s]{0,3}(?:tu\s+es|vous\s+êtes|"
        r"tu\s+réponds|réponds|tu\s+dois|tu\s+ne|tu\s+obéis)"
        r"|(?:теперь|отныне|с\s+этого\s+момента|впредь)[,\s]{0,3}(?:ты|вы)\s+(?:—\s*)?(?:не\s+)?"
        r"(?:являешься|будешь|отвечаешь|должен|должна|свободн|без|—|обязан|больше)"
        r"|(?:これから|今後|今から|以後)は?[、,]?\s*(?:あなた|君|お前)は"
        r"|(?:지금부터|앞으로|이제부터)\s*(?:너는|당신은)",
        "partir desde ahora jetzt nun sofort fortan heute désormais dorénavant こ 今 以 지 앞 이",
        ("теперь", "отныне", "с этого", "впредь"),
    ),
    rule(
        "deception_hide",
        r"\bno\s+(?:le\s+)?(?:digas|cuentes|menciones|reveles|informes|diga)\b[^.\n]{0,30}"
        r"\b(?:al\s+usuario|a\s+la\s+usuaria|esto|esta\s+(?:regla|nota|instrucción)|estas\s+notas)"
        r"|\b(?:sag|sage|erzähl|erzähle|erwähne|verrate|sagen\s+sie)\b[^.\n]{0,40}\b(?:dem|der)\s+"
        r"(?:nutzer|benutzer|user|anwender|nutzerin|benutzerin)\b[^.\n]{0,40}\bnicht\b"
        r"|\b(?:nicht|niemals|nie)\s+(?:dem\s+)?(?:nutzer|benutzer)\s+(?:sagen|erzählen|verraten|"
        r"mitteilen|erwähnen)"
        r"|\bne\s+(?:dis|dites|mentionne|mentionnez|révèle|révélez)\s+(?:rien|pas|jamais)\b[^.\n]{0,40}"
        r"\butilisat"
        r"|не\s+(?:говори|сообщай|рассказывай|упоминай|показывай|раскрывай)[^.\n]{0,30}пользовател"
        r"|ユーザー(?:に|には)[^。\n]{0,10}(?:言わ|教え|伝え|知らせ|話さ)(?:ない|るな)"
        r"|사용자에게\s*(?:[^.\n]{0,10})?(?:말하지|알리지)\s*마",
        "digas cuentes menciones reveles informes diga sag sage erzähl erzähle erwähne verrate"
        " sagen nicht niemals nie dis dites mentionne mentionnez révèle révélez ユ 사",
        ("не говори", "не сообщ", "не расск", "не упом", "не показ", "не раскр"),
    ),
    rule(
        "leak_system_prompt",
        r"\b(?:muestra|revela|imprime|repite|dime|enséñame)\b[^.\n]{0,30}\b(?:prompt|instrucciones)"
        r"\s+(?:del\s+sistema|iniciales|originales|de\s+sistema)"
        r"|\b(?:gib|zeig|zeige|nenne|wiederhole|verrate)\b[^.\n]{0,30}(?:system-?prompt|"
        r"systemanweisungen|anfangsanweisungen|ursprünglichen\s+anweisungen)"
        r"|\b(?:affiche|montre|révèle|répète|donne-moi)\b[^.\n]{0,30}\b(?:prompt\s+système|"
        r"instructions\s+(?:système|initiales))"
        r"|(?:покажи|выведи|раскрой|повтори|напиши)[^.\n]{0,30}(?:системн\w*\s+(?:промпт|подсказк|"
        r"инструкци)|исходн\w*\s+инструкци)"
        r"|システムプロンプト[^。\n]{0,10}(?:表示|出力|教え|見せ)"
        r"|시스템\s*프롬프트[^.\n]{0,10}(?:보여|출력|알려)",
        "muestra revela imprime repite dime enséñame gib zeig zeige nenne wiederhole verrate"
        " affiche montre révèle répète シ 시",
        ("покаж", "выведи", "раскрой", "повтори", "напиши"),
    ),
    rule(
        "exfil_send",
        r"\b(?:envía|envia|manda|reenvía|sube)\b[^.\n]{0,60}\b(?:conversación|historial|contraseñas?|"
        r"claves?|credenciales|mensajes)\b[^.\n]{0,60}(?:@|https?://|\ba\s+mi\b)"
        r"|\b(?:sende|schicke|leite|lade)\b[^.\n]{0,60}\b(?:unterhaltung|gesprächsverlauf|verlauf|"
        r"passwörter|passwort|schlüssel|zugangsdaten|nachrichten)\b[^.\n]{0,60}(?:@|https?://)"
        r"|\b(?:envoie|envoyez|transfère|transférez)\b[^.\n]{0,60}\b(?:conversation|historique|"
        r"mots?\s+de\s+passe|clés?|identifiants)\b[^.\n]{0,60}(?:@|https?://)"
        r"|(?:отправ|перешл|пересыл|загрузи)\w*[^.\n]{0,60}(?:переписк|истори\w*\s+(?:чата|диалога)|"
        r"парол|ключ|токен)[^.\n]{0,60}(?:@|https?://)"
        r"|(?:会話|履歴|パスワード|APIキー|鍵)[^。\n]{0,20}(?:送信|送って|転送|アップロード)",
        "envía envia manda reenvía sube sende schicke leite lade envoie envoyez transfère"
        " transférez 会 履 パ 鍵 api",
        ("отправ", "перешл", "пересыл", "загрузи"),
    ),
]

ZH_RULES = RuleSet(_ZH_RULES)
OTHER_RULES = RuleSet(_OTHER_RULES)
