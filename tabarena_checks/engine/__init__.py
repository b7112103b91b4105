"""The native TabArena engine: a judged run's raw results -> the method cache TabArena 0.1.0 writes."""
