"""What E2B's API does with template names, builds and tags, shared by tests/helpers/fake_e2b.py and
tests/helpers/e2b_emulator.py (e2b-dev/infra, packages/api and packages/db/queries):

- a build request claims the name and assigns its tags (`default` when none is given) at once, before
  anything is built (`template_request_build`, `env_build_assignments`): the name resolves from then on
  (`GET /templates/aliases/{alias}`, the SDK's `Template.exists`);
- `get_tags` lists the newest assignment of each tag whatever its build's status (`ListTemplateTags`);
- a sandbox or a tag assignment resolves `name:tag` (or `name:<build id>`) to the newest assignment whose
  build is ready (`GetTemplateWithBuildByTag`, `status_group = 'ready'`), else 404.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import e2b


@dataclass
class TemplateName:
    """One template name: its builds by id (each has `build_id` and `status`) and tag assignments, oldest first."""

    builds: dict[str, Any] = field(default_factory=dict)
    assignments: list[tuple[str, str]] = field(default_factory=list)

    def resolve(self, reference: str) -> Any:
        """The newest ready build assigned this tag or with this build id, or None."""
        for tag, build_id in reversed(self.assignments):
            if reference in (tag, build_id) and self.builds[build_id].status == "ready":
                return self.builds[build_id]
        return None

    def newest(self) -> Any:
        return list(self.builds.values())[-1]


class TemplateStore(dict[str, TemplateName]):
    """The account's template names."""

    def claim(self, name: str, build: Any, tags: list[str] | None) -> None:
        """A build request: the name and the tags point at `build` before it is built."""
        alias, _, tag = name.partition(":")
        entry = self.setdefault(alias, TemplateName())
        entry.builds[build.build_id] = build
        entry.assignments += [(t, build.build_id) for t in [tag or "default", *(tags or [])]]

    def resolve(self, reference: str) -> Any:
        """The ready build `name[:tag]` starts sandboxes from; raises the API's 404 otherwise."""
        name, _, tag = reference.partition(":")
        build = self[name].resolve(tag or "default") if name in self else None
        if build is None:
            raise e2b.NotFoundException(f"404: template '{reference}' not found")
        return build

    def get_tags(self, name: str) -> list[e2b.TemplateTag]:
        if name not in self:
            raise e2b.NotFoundException(f"404: template '{name}' not found")
        newest = dict(self[name].assignments)
        return [
            e2b.TemplateTag(tag=tag, build_id=build_id, created_at=datetime.now(timezone.utc))
            for tag, build_id in sorted(newest.items())
        ]

    def assign_tags(self, target: str, tags: list[str]) -> Any:
        build = self.resolve(target)
        self[target.partition(":")[0]].assignments += [(tag, build.build_id) for tag in tags]
        return type("TemplateTagInfo", (), {"build_id": build.build_id, "tags": tags})()


class TokenBucket:
    """The API's rate limiter for a team's route (infra `api/internal/middleware/ratelimit/ratelimit.go`,
    redis_rate's GCRA): `rate` requests a second, `burst` at once; a request without a token is a 429."""

    def __init__(self, rate: float, burst: int = 1):
        self._rate, self._burst = rate, burst
        self._tokens, self._at = float(burst), time.monotonic()
        self._lock = threading.Lock()

    def allow(self) -> bool:
        with self._lock:
            now = time.monotonic()
            self._tokens = min(self._burst, self._tokens + (now - self._at) * self._rate)
            self._at = now
            if self._tokens < 1:
                return False
            self._tokens -= 1
            return True
