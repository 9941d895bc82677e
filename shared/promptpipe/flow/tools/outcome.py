"""The day's outcome in the participant's words, recorded by the model (``tool_table.OUTCOME``).

A report of "done" goes through the one recorder (``flow.day_outcome.record_done``): once per daily
prompt, within the window after its delivery. "Not done" counts nothing and leaves the poll open (a
later tap on Done still counts). The result gives the model the stored count, which is what its
reply may say (a reply stating another count is corrected: ``rules.outcome.correct_count``).
"""

from __future__ import annotations

from typing import Any

from promptpipe.controller.tool_table import OUTCOME, Module
from promptpipe.flow.day_outcome import OUTCOME_WINDOW_HOURS, already_counted, open_prompt, record_done
from promptpipe.flow.deps import FlowDeps
from promptpipe.flow.tools.base import RowTool, ToolContext, ToolResult

ROW = OUTCOME


class OutcomeTool(RowTool):
    row = ROW

    def execute(self, ctx: ToolContext, args: dict[str, Any]) -> ToolResult:
        done = args.get("done")
        if not isinstance(done, bool):
            return ToolResult.error("done is required and must be true or false")
        session = ctx.session
        prompt_sent_at = open_prompt(session)
        if not prompt_sent_at:
            status = f"no daily prompt in the last {OUTCOME_WINDOW_HOURS:g} hours: nothing counted"
        elif done and not already_counted(session, prompt_sent_at):
            session.apply("count_done", record_done(prompt_sent_at))
            status = "counted"
        else:
            status = "already counted" if done else "not done: nothing counted"
        profile = session.data.profile()
        count = {"done_so_far": profile.success_count, "prompts_delivered": profile.total_prompts}
        return ToolResult(
            ok=True,
            text=f"Outcome recorded ({status}). Done so far: {profile.success_count} of {profile.total_prompts}.",
            data={"status": status, **count},
        )


def build(deps: FlowDeps, module: Module) -> OutcomeTool:
    return OutcomeTool()
