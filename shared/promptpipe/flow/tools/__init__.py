"""The four LLM tools (FACTS §1): save_user_profile, scheduler, generate_habit_prompt,
transition_state. Each mutates the session, never the table."""
