"""select/cons_res and select/cons_tres: cores, CPUs, sockets and memory as consumable
resources, as Slurm 22.05's consumable-resource plugins allocate them.

* **Units** (``layout``): SelectTypeParameters CR_CPU, CR_Core or CR_Socket, each optionally
  with ``_Memory``, or CR_Memory alone (CPUs shared freely, memory counted). Unset, it is
  CR_Core_Memory. A partition's own SelectTypeParameters may switch cores and sockets.
* **Requests** (``needs``): ``-N``, ``-n``, ``-c``, ``--mem``, ``--mem-per-cpu``,
  ``--exclusive``, ``--oversubscribe``, ``-w``, ``-x`` (the core leaves excluded nodes out),
  ``--contiguous``; DefMemPerNode/DefMemPerCPU and MaxMemPerNode/MaxMemPerCPU, partition
  first, then cluster.
* **Rows** (``usage``): OverSubscribe=FORCE:n always, YES:n with ``--oversubscribe``, lets up
  to n jobs share a core *within one partition*; jobs are counted per partition (unlike
  select/linear, which counts per node across partitions). EXCLUSIVE or ``--exclusive`` takes
  whole nodes.
* **Placement** (``steps``, ``placement``): idle cores first; with gang scheduling, tiers:
  a job may be placed on top of lower-PriorityTier partitions' jobs (gang suspends them), then
  into its own partition's rows. Nodes are chosen by best fit over consecutive nodes.
* **Preemption** (``preempt``): the simulate-and-test loop over CANCEL/REQUEUE candidates with
  one reorder (PreemptParameters reorder_count, strict_order), and QOS suspension into the
  partition's extra row.
* A gang suspension keeps a job in its row; only an admin suspension frees its cores (never
  its memory).
"""

from __future__ import annotations

from plurm_select_cons_res.plugin import ConsResSelect

__all__ = ["ConsResSelect"]
