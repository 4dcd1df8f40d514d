"""Reading inputs: sources (paths, folders, archives, uploads) and their bounds, JSON records and lines, repeated histories, times."""
