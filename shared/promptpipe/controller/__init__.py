"""The gate-driven flow controller: declarative flow definitions, a deterministic decision
algorithm and its runtime state (docs/controller.md). Pure: no I/O and no clock of its own."""
