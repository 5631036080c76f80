"""DeerFlow homes to migrate, written from the seed's §13.1 schema as DeerFlow writes it
(``json.dump(indent=2, ensure_ascii=False)``): facts with confidence and source threads,
in Chinese and English, in each of DeerFlow's layouts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def summary(text: str, at: str = "2025-11-03T09:12:44.103511Z") -> dict[str, str]:
    return {"summary": text, "updatedAt": at}


def fact(
    fact_id: str,
    content: str,
    category: str,
    confidence: float,
    *,
    source: str = "thread-7f3c2a",
    created: str = "2025-10-21T14:03:11.552014Z",
) -> dict[str, Any]:
    return {
        "id": fact_id,
        "content": content,
        "category": category,
        "confidence": confidence,
        "createdAt": created,
        "source": source,
    }


def memory_json(
    *,
    work: str = "",
    personal: str = "",
    top: str = "",
    recent: str = "",
    earlier: str = "",
    background: str = "",
    facts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "version": "1.0",
        "lastUpdated": "2025-11-03T09:12:44.103511Z",
        "user": {
            "workContext": summary(work),
            "personalContext": summary(personal),
            "topOfMind": summary(top),
        },
        "history": {
            "recentMonths": summary(recent),
            "earlierContext": summary(earlier),
            "longTermBackground": summary(background),
        },
        "facts": facts or [],
    }


# 张伟: Chinese summaries and facts, every category of §13.2 and one DeerFlow never had.
ZHANG = memory_json(
    work="在杭州一家电商公司做后端开发，主要负责订单系统，技术栈是 Go 和 PostgreSQL。",
    personal="住在杭州西湖区，周末喜欢爬山。",
    top="正在准备把订单服务从单体拆成微服务，下个月评审。",
    recent="最近三个月在排查订单库的慢查询，和 DBA 一起加了几个联合索引。",
    earlier="去年主导了支付网关的重构，接入了两家新的支付渠道。",
    background="计算机专业硕士，毕业后一直做后端，之前在一家物流公司工作过三年。",
    facts=[
        fact("fact_1a2b3c4d", "偏好简洁的回答，代码示例优先用 Go", "preference", 0.93),
        fact("fact_2b3c4d5e", "名字叫张伟", "identity", 0.98, source="thread-0a11"),
        fact("fact_3c4d5e6f", "有一个五岁的女儿", "personal_info", 0.81),
        fact("fact_4d5e6f70", "订单库是 PostgreSQL 15，主从各一台", "knowledge", 0.88),
        fact("fact_5e6f7081", "代码评审时要求每个 PR 都附带压测结果", "behavior", 0.74),
        fact("fact_6f708192", "目标是年底前把 P99 延迟压到 200ms 以内", "goal", 0.86),
        fact("fact_708192a3", "当前在做库存服务的拆分", "context", 0.69),
        fact("fact_8192a3b4", "团队用飞书管理需求", "workflow", 0.77),
    ],
)

# Ada: English, facts with and without the optional fields.
ADA = memory_json(
    work="Staff engineer on the data platform team at a fintech; owns the Kafka ingestion path.",
    personal="Lives in Lisbon; cycles to work.",
    recent="Spent the last quarter migrating batch jobs from Airflow 1 to Airflow 2.",
    facts=[
        fact("fact_a1", "Prefers answers with a short summary first", "preference", 0.9),
        fact("fact_a2", "Uses Neovim with LazyVim", "knowledge", 0.72, source="thread-91"),
        {"id": "fact_a3", "content": "Goes by Ada, not Adelaide", "category": "identity"},
    ],
)


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = data if isinstance(data, str) else json.dumps(data, indent=2, ensure_ascii=False)
    path.write_text(text, encoding="utf-8")
    return path


def every_layout(home: Path) -> Path:
    """A home with each of DeerFlow's layouts: global, per agent, per user, per user and agent."""
    write(
        home / "memory.json",
        memory_json(
            work="Runs the research team's evaluation harness.",
            facts=[fact("fact_g1", "Likes tables over bullet lists", "preference", 0.8)],
        ),
    )
    write(
        home / "agents/coder/memory.json",
        memory_json(facts=[fact("fact_c1", "The repo uses uv and ruff", "knowledge", 0.9)]),
    )
    write(home / "users/zhang/memory.json", ZHANG)
    write(home / "users/ada/memory.json", ADA)
    write(
        home / "users/ada/agents/researcher/memory.json",
        memory_json(
            facts=[
                fact("fact_r1", "Cites arXiv ids, not titles", "behavior", 0.83),
                fact("fact_r2", "Ada is allergic to peanuts", "personal_info", 0.95),
            ]
        ),
    )
    return home
