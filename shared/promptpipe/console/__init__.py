"""``promptpipe console``: the coordinator's web console (server-rendered, no JavaScript).

Templates and the style sheet live beside this package; nothing in the core imports it."""
