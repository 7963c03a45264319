"""The models of the FinDocMRE tests, on the provider fakes (tests/helpers/providers): a zero-shot reader that
answers from the images its request carried (findocmre_reader.py), an agent that crops the charts it needs out of
the kept page images with the sandbox's own tools and looks at them, and a judge that scores an open answer 5
when it states the reference exactly, else 0."""

from __future__ import annotations

import json
import re
from typing import Any

from tests.helpers.findocmre_reader import answer
from tests.helpers.openai_server import Step, reply
from tests.helpers.providers.chat_completions import ChatCompletionsProvider, chat_reply
from tests.helpers.providers.loopback import LoopbackProvider, Turn

_LONG = 4000
"""A longer string without a space in a request is image data, never the prompt."""
QUESTIONS_FOLLOW = "Here is the set of financial questions to be answered: "
"""The last line of the paper's standard prompt (Table 14), which the batch's questions follow as a JSON list."""


def request_text(body: Any) -> str:
    """Every string of a request but image data, in order, one a line: the prompt whatever the provider's shape."""
    if isinstance(body, str):
        return "" if body.startswith("data:") or (len(body) >= _LONG and " " not in body) else body
    if isinstance(body, dict):
        return "\n".join(filter(None, (request_text(value) for value in body.values())))
    if isinstance(body, list):
        return "\n".join(filter(None, (request_text(value) for value in body)))
    return ""


def batch_reply(prompt: str, pngs: list[bytes]) -> str:
    """The reply to the paper's standard prompt: the JSON list of `{"answer": ...}`, each question of the list the
    prompt carries answered by the reader from the images (its answer tag's content; empty when it has none)."""
    start = prompt.index(QUESTIONS_FOLLOW) + len(QUESTIONS_FOLLOW)
    questions, _ = json.JSONDecoder().raw_decode(prompt, start)
    answers = [
        re.search(r"<answer>(.*)</answer>", answer(question["question"], pngs), re.DOTALL) for question in questions
    ]
    return json.dumps([{"answer": found.group(1) if found else ""} for found in answers], ensure_ascii=False)


def zero_shot_reply(prompt: str, pngs: list[bytes]) -> str:
    """The reader's reply to either zero-shot prompt: a batch's list (Table 14), or one question's answer tag."""
    return batch_reply(prompt, pngs) if QUESTIONS_FOLLOW in prompt else answer(prompt, pngs)


def zero_shot_turns(fake: LoopbackProvider) -> Any:
    """The script of a `LoopbackProvider`: one reply, measured from the latest request's images."""

    def turn(_model_turns: int) -> Turn:
        return Turn(text=zero_shot_reply(request_text(fake.requests[-1]), [image.data for image in fake.last_images]))

    return turn


def zero_shot_chat(fake: ChatCompletionsProvider) -> Any:
    """The `respond` of a chat fake: the same reader."""

    def respond(request: dict[str, Any]) -> Step:
        return chat_reply(content=zero_shot_reply(request_text(request), [image.data for image in fake.last_images]))

    return respond


def score_judge(request: dict[str, Any]) -> Step:
    """A judge of the `score` grader asked the paper's prompt (Table 15, the findocmre profile's): a bare 5 when the
    reference is stated exactly in the answer, else 0."""
    prompt = request_text(request)
    reference = re.search(r"^The reference answer is: (.+)$", prompt, re.MULTILINE)
    answer = prompt.partition("The answer to be evaluated is: ")[2]
    stated = reference is not None and reference.group(1).strip() in answer
    return reply("5" if stated else "0")


_CROP = r"""
import glob, re, pymupdf
number = {figure}
for markdown in sorted(glob.glob('/workspace/documents/*.md')):
    pages = re.split(r'--- page (\d+) of \d+ ---', open(markdown, encoding='utf-8').read())
    for page, text in zip(pages[1::2], pages[2::2]):
        if re.search(r'(Figure|图) ?%d\b' % number, text):
            image = pymupdf.open(markdown[:-3] + '.images/page-%03d.png' % int(page))
            pdf = pymupdf.open('pdf', image.convert_to_pdf())
            rect = pdf[0].rect
            box = pymupdf.Rect(0, rect.height * 0.12, rect.width, rect.height)
            pdf[0].get_pixmap(clip=box).save('/tmp/figure%d.png' % number)
            print('/tmp/figure%d.png' % number)
"""
"""The agent's tool use: find the page whose caption names the figure, open that page's kept image and cut the
chart out below its caption (pymupdf, which every sandbox has)."""


def _figures(question: str) -> list[int]:
    found = [int(a or b) for a, b in re.findall(r"Figure (\d)|图(\d)", question)]
    return list(dict.fromkeys(found))


def _call(name: str, arguments: dict[str, str], number: int) -> dict[str, Any]:
    return {
        "id": f"call_{name}_{number}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def looking_agent(fake: ChatCompletionsProvider) -> Any:
    """The `respond` of an agent with vision: crop each figure the question names, look at each, then answer from
    what it saw. Without vision it has no view_image tool, tries to answer from the documents' text, and cannot.
    Offered no tool at all (`--zero-shot`), it answers from the images its prompt carries."""

    def respond(request: dict[str, Any]) -> Step:
        messages = request["messages"]
        if "tools" not in request:  # the paper's protocol: the images are in the prompt, no tools to use
            prompt = request_text(messages)
            return chat_reply(content=zero_shot_reply(prompt, [image.data for image in fake.last_images]))
        question = request_text(messages[1])
        calls = [call for message in messages for call in message.get("tool_calls") or []]
        figures = _figures(question)
        vision = any(tool["function"]["name"] == "view_image" for tool in request.get("tools", []))
        if not calls:
            script = "\n".join(f"python3 - <<'EOF'\n{_CROP.format(figure=n)}\nEOF" for n in figures)
            return chat_reply(content="", calls=[_call("bash", {"command": script}, 0)])
        viewed = sum(call["function"]["name"] == "view_image" for call in calls)
        if vision and viewed < len(figures):
            path = f"/tmp/figure{figures[viewed]}.png"
            return chat_reply(content="", calls=[_call("view_image", {"path": path}, viewed + 1)])
        return chat_reply(content=answer(question, [image.data for image in fake.last_images]))

    return respond
