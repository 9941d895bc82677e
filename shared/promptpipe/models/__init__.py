"""Pydantic models at every boundary. ``state`` holds the contract's DataKeys and their shapes."""
