"""The executors of the coach's tools, one module per row of ``promptpipe.controller.tool_table``
(docs/behaviour.md#B-TOOL-1; registered by ``registry``). Each mutates the session, never the table."""
