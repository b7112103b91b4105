"""The TabArena plugin: registered through the ``checks`` entry point like any third party."""
