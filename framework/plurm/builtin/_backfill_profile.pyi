# The compiled profile (_backfill_profile.pyx): the reference's interface, for mypy.
from collections.abc import Iterable, Iterator

class Profile:
    everything: int
    starts: list[float]
    def __init__(
        self, now: float, everything: int, ends: dict[float, int], held: int | None = None
    ) -> None: ...
    @classmethod
    def of_held(
        cls,
        now: float,
        resolution: int,
        held: Iterable[tuple[object, float | None, int]],
        node_count: int,
    ) -> tuple[Profile, int]: ...
    def free_now(self) -> int: ...
    def view(self, usable: int) -> tuple[list[float], list[int], int]: ...
    def build_view(self, usable: int) -> None: ...
    def reserve(self, start: float, end: float, nodes: int) -> None: ...
    def openings(
        self, usable: int, least: int, duration: float, horizon: float
    ) -> Iterator[tuple[float, int]]: ...
