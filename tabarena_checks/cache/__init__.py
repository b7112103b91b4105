"""The method cache as a file tree: where it lives, how it is named, and the manifest tying it to judged input."""
