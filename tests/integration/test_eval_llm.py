"""``make eval-llm`` (``scripts/corpus/eval_llm.py``): without a key one line and exit 0; with one, the corpus
is played through the project's OpenAI adapter over HTTP — here against the competent-model stand-in
served as an OpenAI-compatible Chat Completions endpoint on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from promptpipe.rules.model_prices import PRICES, ModelPrice
from scripts.corpus.chat_completions_server import ChatCompletionsServer
from scripts.corpus.eval_llm import (
    NO_KEY,
    ConversationScore,
    chosen_price,
    evaluate,
    main,
    pass_hat,
    render,
    render_repeated,
)
from scripts.corpus.model import load_corpus
from scripts.corpus.player import Player
from scripts.corpus.standin import CompetentStandIn, Cursor

ROOT = Path(__file__).resolve().parents[2]
# An intake that ends with "yes", a feedback week with a time change, one that leaves midway
PLAYED = ("walk-yes", "leaves-midway", "week-move-it-to-7pm")  # in corpus order


def test_without_a_key_it_says_so_in_one_line_and_exits_0() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = subprocess.run(
        [sys.executable, "-m", "scripts.corpus.eval_llm"],
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

    # When eval-llm plays them through the OpenAI adapter at that endpoint, at a given price
    price = ModelPrice(input_per_million=1.0, cached_input_per_million=0.5, output_per_million=4.0)
    scores, outcomes = evaluate(
        api_key="test-key", model="stand-in-model", base_url=server.base_url, only=PLAYED, cursor=cursor, price=price
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
        assert s.cost_usd == pytest.approx((s.prompt_tokens * 1.0 + s.completion_tokens * 4.0) / 1e6)
        assert s.passed == expected.passed
    assert server.models == {"stand-in-model"}  # the model named by GENAI_MODEL

    # And the report has a line per conversation and the totals
    report = render("stand-in-model", scores, outcomes, price=price, price_given=True)
    assert all(any(line.startswith(cid) for line in report.splitlines()) for cid in PLAYED)
    assert f"completed {sum(s.completed for s in scores)}/3" in report
    assert "price: stand-in-model at $1 in, $0.5 cached in, $4 out per 1M tokens (given)" in report


def test_a_model_is_priced_at_its_own_price_or_at_none() -> None:
    assert chosen_price("gpt-4o", None, None) == (PRICES["gpt-4o"], False)
    assert chosen_price("gpt-4o-mini-2024-07-18", None, None) == (PRICES["gpt-4o-mini"], False)
    assert chosen_price("local-llama", None, None) == (None, False)  # not gpt-4o-mini's price
    assert chosen_price("local-llama", 0.2, 0.8) == (ModelPrice(0.2, 0.1, 0.8), True)
    assert chosen_price("gpt-4o", None, 12.0) == (ModelPrice(2.5, 1.25, 12.0), True)  # the rest from the table
    assert chosen_price("gpt-4o", 3.0, None, 0.3) == (ModelPrice(3.0, 0.3, 10.0), True)
    with pytest.raises(SystemExit, match="give both --price-in and --price-out"):
        chosen_price("local-llama", 0.2, None)
    unpriced = ConversationScore("c", True, 0, 0, 0, 1, 10, 0, 5, None, passed=True)
    assert "not in promptpipe.rules.model_prices" in render("local-llama", [unpriced], [], price=None)
    assert "cost n/a" in render("local-llama", [unpriced], [], price=None)


def _score(conversation: str, passed: bool) -> ConversationScore:
    return ConversationScore(conversation, passed, 0, 0, 0, 1, 100, 0, 10, 0.001, passed=passed)


def test_pass_hat_k_counts_a_conversation_only_if_all_k_runs_pass() -> None:
    # a passes 3/3, b 2/3, c 0/3 (tau-bench: pass^k = mean over conversations of C(c,k)/C(K,k))
    runs = [
        [_score("a", True), _score("b", True), _score("c", False)],
        [_score("a", True), _score("b", False), _score("c", False)],
        [_score("a", True), _score("b", True), _score("c", False)],
    ]
    hats = pass_hat(runs)
    assert hats[1] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert hats[2] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert hats[3] == pytest.approx(1 / 3)  # only a passed every run
    assert pass_hat([]) == {}
    summary = render_repeated("gpt-4o-mini", runs, PRICES["gpt-4o-mini"])
    assert "b                                    passed 2/3  <- not pass^K" in summary
    assert "pass^3 33.3%" in summary and "cost of the 3 runs: $0.0090" in summary


@pytest.mark.slow
def test_repeat_plays_k_times_and_prints_pass_hat_k_and_the_cost_at_the_given_price(
    served: tuple[ChatCompletionsServer, Cursor], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server, _cursor = served
    # The served stand-in follows the player's cursor: share it (the in-process test above passes it)
    monkeypatch.setattr("scripts.corpus.player.Cursor", lambda: _cursor)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("GENAI_MODEL", "gpt-4o")
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)

    status = main(["--repeat", "2", "--only", "walk-yes", "--price-in", "1", "--price-out", "4"])

    out = capsys.readouterr().out
    assert status == 0
    assert out.count("eval-llm: model gpt-4o, 1 conversation(s)\n") == 2  # one report per run
    assert "--- run 2 of 2" in out and "walk-yes                             passed 2/2" in out
    assert "pass^k: pass^1 100.0%, pass^2 100.0%" in out
    assert "price: gpt-4o at $1 in, $0.5 cached in, $4 out per 1M tokens (given)" in out
    assert "cost of the 2 runs: $" in out
    assert server.requests > 0


def _conversations() -> list:
    return [c for c in load_corpus() if c.id in PLAYED]
