"""The ``plurm`` command line."""
