"""Sandboxes that outlive their runner (E2B's: a backend whose `leftovers` hook says how to kill them) a run
leaves running: the runner killed (kill -9, a lost machine), a Ray node lost
mid-episode, a second Ctrl-C that stops waiting for the nodes, a kill the service failed to answer. They
bill until their lifetime ends, on whichever host made them.

Each start of a run (an invocation) is named in its sandboxes' metadata and in the run folder's
`invocations` before its first episode. At its end it kills what is left of it on every host; the next start
in the folder holds the folder's lock, so no earlier start is alive, and kills what those left. Shards of one
run id on several machines run in folders of their own, so no sweep reaches another's live sandboxes.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from rich.console import Console

from harness.records.run_folder import RunFolder
from harness.sandboxes.backend import Killer, SandboxBackend
from harness.sandboxes.base import SandboxError


def new_invocation() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Leftovers:
    folder: RunFolder
    backend: str
    """Its name, for the console."""
    kill_left_by: Killer
    """Kill what these invocations of the folder's run left running on any host; the ids. Raises `SandboxError`."""

    @staticmethod
    def of(folder: RunFolder, backend: SandboxBackend) -> Leftovers | None:
        """None where nothing outlives the runner (`SandboxBackend.leftovers`): a local sandbox dies with it,
        and a Docker container of a dead runner is removed by the next run on its host (its `start`)."""
        kill = backend.leftovers()
        return None if kill is None else Leftovers(folder, str(backend.facts.get("backend")), kill)

    def begin(self, invocation: str, console: Console) -> None:
        """With the folder's lock held, before this start's first episode: kill what earlier starts left, and
        name this one in the folder."""
        remaining, _ = self._sweep_recorded(console)
        self.folder.write_invocations([*remaining, invocation])

    def sweep(self, console: Console) -> list[str]:
        """With the folder's lock held, once every episode of the holder's start has ended (or by `sandbox
        cleanup RUN`): kill what the recorded starts left, and keep in the folder those the service could not
        be asked about; the ids killed."""
        remaining, killed = self._sweep_recorded(console)
        try:
            self.folder.write_invocations(remaining)
        except OSError as error:  # a full disk: the starts stay named, and the next start sweeps them again
            console.print(
                f"warning: cannot write {self.folder.invocations_path}: {error}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return killed

    def _sweep_recorded(self, console: Console) -> tuple[list[str], list[str]]:
        """Kill what the folder's recorded starts left (none but the caller's is alive: it holds the lock): the
        starts still to sweep (all of them when the service cannot be asked, else none), and the ids killed."""
        recorded = self.folder.read_invocations()
        if not recorded:
            return [], []
        try:
            killed = self.kill_left_by(recorded)
        except SandboxError as error:
            console.print(
                f"warning: {self.backend}: cannot kill the sandboxes the run left running ({error}); its next "
                f"start tries again, or `python -m harness sandbox cleanup {self.folder.path}`",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
            return recorded, []
        if killed:
            console.print(
                f"{self.backend}: killed {len(killed)} sandboxes the run left running: {' '.join(killed)}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return [], killed
