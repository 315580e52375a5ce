"""Tools for jobacct_gather plugins: reading a job's processes from /proc
(:mod:`.procfs`) and keeping each step's figures from those samples (:mod:`.tally`). The
core ships them so that every plugin that samples processes counts alike."""
