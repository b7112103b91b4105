"""Synthetic TabArena runs in the real layout, with defects on demand: ``checks tabarena synth`` (which also owns the
``checks tabarena`` command group), the demo and the tests."""
