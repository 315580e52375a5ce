"""Live mode: ``plurmctld`` and ``plurmd`` drive the same controller with the wall clock and
real processes, and Slurm's commands reach it over HTTP/JSON (docs/ARCHITECTURE.md)."""
