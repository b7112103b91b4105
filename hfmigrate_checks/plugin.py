"""The Hugging Face migration plugin: registered through the ``checks`` entry point."""
