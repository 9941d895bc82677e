"""``make eval-llm`` (``scripts/eval_llm.py``): without a key one line and exit 0; with one, the corpus
is played through the project's OpenAI adapter over HTTP — here against the competent-model stand-in
served as an OpenAI-compatible Chat Completions endpoint on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from scripts.chat_completions_server import ChatCompletionsServer
from scripts.corpus_model import load_corpus
from scripts.corpus_player import Player
from scripts.corpus_standin import CompetentStandIn, Cursor
from scripts.eval_llm import NO_KEY, Prices, evaluate, render

ROOT = Path(__file__).resolve().parents[2]
# An intake that ends with "yes", a feedback week with a time change, one that leaves midway
PLAYED = ("walk-yes", "leaves-midway", "week-move-it-to-7pm")  # in corpus order


def test_without_a_key_it_says_so_in_one_line_and_exits_0() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "scripts.eval_llm"],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (0, NO_KEY + "\n")


@pytest.fixture
def served() -> Iterator[tuple[ChatCompletionsServer, Cursor]]:
    cursor = Cursor()
    with ChatCompletionsServer(CompetentStandIn(cursor)) as server:
        yield server, cursor


@pytest.mark.slow
def test_it_plays_the_corpus_over_http_and_scores_each_conversation(
    served: tuple[ChatCompletionsServer, Cursor],
) -> None:
    server, cursor = served
    # Given the stand-in behind an OpenAI-compatible endpoint, and the same conversations played in process
    in_process = {o.conversation.id: o for o in map(Player(CompetentStandIn).play, _conversations())}

    # When eval-llm plays them through the OpenAI adapter at that endpoint
    scores, outcomes = evaluate(
        api_key="test-key", model="stand-in-model", base_url=server.base_url, only=PLAYED, cursor=cursor
    )

    # Then every model call went over HTTP, and each conversation scores as it does in process
    assert [s.conversation for s in scores] == list(PLAYED)
    assert server.requests == sum(s.model_calls for s in scores) > 0
    for s, outcome in zip(scores, outcomes, strict=True):
        expected = in_process[s.conversation]
        assert (s.completed, s.stranded, s.forced) == (expected.completed, expected.stranded, expected.forced)
        assert outcome.state["profile"] == expected.state["profile"]
        assert s.invalid_arguments == 0
        assert s.prompt_tokens > 0 and s.completion_tokens > 0  # the endpoint's usage, read by the adapter
        prices = Prices()
        assert s.cost_usd == pytest.approx(s.prompt_tokens * prices.input + s.completion_tokens * prices.output)
    assert server.models == {"stand-in-model"}  # the model named by GENAI_MODEL

    # And the report has a line per conversation and the totals
    report = render("stand-in-model", scores, outcomes)
    assert all(any(line.startswith(cid) for line in report.splitlines()) for cid in PLAYED)
    assert f"total: completed {sum(s.completed for s in scores)}/3" in report


def _conversations() -> list:
    return [c for c in load_corpus() if c.id in PLAYED]
