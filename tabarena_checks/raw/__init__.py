"""A run's raw results, read safely and queried once: the restricted reader, the DuckDB index, what the data says
(inference) and validation-protocol keys."""
