"""Every Redis key memsvc uses, in one place.

Each key that holds a user's state carries the hash tag ``{<user_id>}``, so all
of a user's keys live in one slot of a Redis Cluster and can be used together
in one script. The service-wide streams and lists carry no user tag.

| key | type | ttl | holds |
|---|---|---|---|
| ``{p}:events`` | stream | - | unprocessed events (deleted once done); group ``{p}:workers`` |
| ``{p}:log`` | stream | ``MAXLEN ~`` + age | every event with its outcome |
| ``{p}:log:digest-key`` | string | - | the secret the log's digests of texts are keyed with |
| ``{p}:events:dead`` | list | - | events that could not be processed, with the error |
| ``{p}:jobs:dead`` | list | - | background jobs that ran out of tries or age |
| ``{p}:inbox:<client>`` | list | 60 s | replies to one client process |
| ``{p}:arq`` | arq queue | - | background jobs (arq adds ``arq:job:<id>`` etc.) |
| ``{p}:journal:due`` | zset | - | unconfirmed commits: [target, user, agent, fp] -> when due |
| ``{p}:gateway:tokens`` | hash | - | gateway tokens: id -> user, admin flag, SHA-256 of the token |
| ``{p}:gateway:tokens:changed`` | channel | - | a token revoked: gateways drop records kept |
| ``{p}:{<user>}:lock:user`` | string | lease | writer lock of the user's ``USER.md`` |
| ``{p}:{<user>}:lock:memory:<agent>`` | string | lease | writer lock of an agent's ``MEMORY.md`` |
| ``{p}:{<user>}:lock:config`` | string | lease | one update of the user's override file at a time |
| ``{p}:{<user>}:snap:<agent>:<thread>`` | string | snapshot ttl | a thread's frozen snapshot |
| ``{p}:{<user>}:failed:<agent>:<thread>`` | hash | 1 h | events refused this turn (the cap) |
| ``{p}:{<user>}:thread:<agent>`` | string | session ttl | the agent's most recent thread |
| ``{p}:{<user>}:turns:<agent>:<thread>`` | hash | session ttl | event id -> turn index, ``_next`` |
| ``{p}:{<user>}:turnq:<agent>:<thread>`` | list | session ttl | turns published, not yet numbered |
| ``{p}:{<user>}:receipt:<event>`` | string | receipt ttl | outcome of an applied write event |
| ``{p}:{<user>}:logpages[:previous]`` | hash | 1 d | log page tokens -> where each page starts |
| ``{p}:{<user>}:journal:user`` | hash | 7 d | head version of ``USER.md`` (see ``journal``) |
| ``{p}:{<user>}:journal:memory:<agent>`` | hash | 7 d | ... of an agent's ``MEMORY.md`` |
| ``{p}:{<user>}:journal:...:unconfirmed`` | zset | 7 d | committed versions not yet renamed |
| ``{p}:{<user>}:hs:turns:<agent>:<thread>`` | hash | session ttl | turns not yet retained |
| ``{p}:{<user>}:hs:buffered:<agent>`` | set | session ttl | threads with turns waiting |
| ``{p}:{<user>}:hs:ops:<agent>:<thread>`` | hash | session ttl | async retains not yet processed |
| ``{p}:{<user>}:hs:flusher:<agent>:<thread>`` | string | lease | the one job flushing the thread |
| ``{p}:{<user>}:hs:wanted:<agent>:<thread>`` | string | session ttl | a flush is due |
| ``{p}:{<user>}:hs:warm:<agent>:<thread>`` | string | 2 min | a recall made for the next turn |
| ``{p}:{<user>}:lock:mirror:user`` | string | lease | one Hindsight mirror of USER.md at a time |
| ``{p}:{<user>}:lock:mirror:memory:<agent>`` | string | lease | ... of an agent's MEMORY.md |
"""

from __future__ import annotations

from dataclasses import dataclass

from memsvc.ids import validate_id
from memsvc.paths import Target

DEFAULT_PREFIX = "memsvc"


@dataclass(frozen=True)
class Keys:
    """Key builder for one deployment; ``prefix`` separates deployments and test runs."""

    prefix: str = DEFAULT_PREFIX

    def _user(self, user_id: str) -> str:
        return f"{self.prefix}:{{{validate_id('user_id', user_id)}}}"

    def _thread(self, kind: str, user_id: str, agent_id: str, thread_id: str) -> str:
        agent = validate_id("agent_id", agent_id)
        return f"{self._user(user_id)}:{kind}:{agent}:{validate_id('thread_id', thread_id)}"

    # service-wide
    @property
    def events(self) -> str:
        return f"{self.prefix}:events"

    @property
    def workers_group(self) -> str:
        return f"{self.prefix}:workers"

    @property
    def workers_seen(self) -> str:
        """When each worker last beat, in Redis' clock (see ``EventBus.beat``)."""
        return f"{self.prefix}:workers:seen"

    @property
    def log(self) -> str:
        return f"{self.prefix}:log"

    @property
    def log_digest_key(self) -> str:
        """The secret the log's digests of texts it does not keep are keyed with."""
        return f"{self.prefix}:log:digest-key"

    @property
    def dead_events(self) -> str:
        return f"{self.prefix}:events:dead"

    @property
    def dead_jobs(self) -> str:
        return f"{self.prefix}:jobs:dead"

    @property
    def job_queue(self) -> str:
        return f"{self.prefix}:arq"

    def job(self, name: str, *parts: str) -> str:
        """A background job's id: a job queued twice under one id runs once."""
        return ":".join((self.prefix, "job", name, *parts))

    def inbox(self, client_id: str) -> str:
        return f"{self.prefix}:inbox:{client_id}"

    @property
    def journal_due(self) -> str:
        return f"{self.prefix}:journal:due"

    @property
    def tokens(self) -> str:
        return f"{self.prefix}:gateway:tokens"

    @property
    def tokens_changed(self) -> str:
        return f"{self.prefix}:gateway:tokens:changed"

    # per user
    def store_lock(self, target: Target, user_id: str, agent_id: str) -> str:
        if target == "user":
            return f"{self._user(user_id)}:lock:user"
        return f"{self._user(user_id)}:lock:memory:{validate_id('agent_id', agent_id)}"

    def config_lock(self, user_id: str) -> str:
        return f"{self._user(user_id)}:lock:config"

    def journal(self, target: Target, user_id: str, agent_id: str) -> str:
        return self.store_lock(target, user_id, agent_id).replace(":lock:", ":journal:", 1)

    def snapshot(self, user_id: str, agent_id: str, thread_id: str) -> str:
        """A thread's pointer to the snapshot it was frozen with."""
        return self._thread("snap", user_id, agent_id, thread_id)

    def snapshot_bodies(self, user_id: str) -> str:
        """The prefix of a user's snapshots, each stored once under its content digest."""
        return f"{self._user(user_id)}:snapbody:"

    def snapshot_withheld(self, user_id: str) -> str:
        """Set while the user's injection config leaves the builtin memory out of prompts."""
        return f"{self._user(user_id)}:snapwithheld"

    def failures(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("failed", user_id, agent_id, thread_id)

    def turns(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("turns", user_id, agent_id, thread_id)

    def earlier_turns(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("turns0", user_id, agent_id, thread_id)

    def turn_queue(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("turnq", user_id, agent_id, thread_id)

    def last_thread(self, user_id: str, agent_id: str) -> str:
        return f"{self._user(user_id)}:thread:{validate_id('agent_id', agent_id)}"

    def receipt(self, user_id: str, event_id: str) -> str:
        return f"{self._user(user_id)}:receipt:{event_id}"

    def log_pages(self, user_id: str) -> str:
        return f"{self._user(user_id)}:logpages"

    # Hindsight provider state
    def retain_buffer(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("hs:turns", user_id, agent_id, thread_id)

    def retain_operations(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("hs:ops", user_id, agent_id, thread_id)

    def flusher(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("hs:flusher", user_id, agent_id, thread_id)

    def flush_wanted(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("hs:wanted", user_id, agent_id, thread_id)

    def buffered_threads(self, user_id: str, agent_id: str) -> str:
        return f"{self._user(user_id)}:hs:buffered:{validate_id('agent_id', agent_id)}"

    def warm_recall(self, user_id: str, agent_id: str, thread_id: str) -> str:
        return self._thread("hs:warm", user_id, agent_id, thread_id)

    def mirror_lock(self, target: Target, user_id: str, agent_id: str) -> str:
        return self.store_lock(target, user_id, agent_id).replace(":lock:", ":lock:mirror:", 1)
