"""The four LLM tools (docs/behaviour.md#B-TOOL-1): save_user_profile, scheduler, generate_habit_prompt,
transition_state. Each mutates the session, never the table."""
