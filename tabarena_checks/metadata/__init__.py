"""MethodMetadata: the record, reading ``info.py`` statically (nothing imported), loading a ``--method-metadata``
reference, comparing it with the raw data; ``checks tabarena metadata`` and ``checks precommit info-py``."""
