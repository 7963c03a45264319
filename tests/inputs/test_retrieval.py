"""Retrieval over a collection (harness/inputs/retrieval): OpenAI's static chunk windows, the local BM25 back end
with no key and no network, and the File Search back end driven through the official SDK against a loopback fake
of OpenAI's documented API (tests/helpers/openai_file_search.py)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.inputs.collections.tokens import encoding
from harness.inputs.retrieval import embeddings as embeddings_module
from harness.inputs.retrieval.backends import make_retriever
from harness.inputs.retrieval.base import RetrievalFailed
from harness.inputs.retrieval.bm25 import terms
from harness.inputs.retrieval.chunks import ChunkSettings, chunk_text
from harness.inputs.retrieval.collection_indexes import KEPT_SETS
from harness.inputs.retrieval.file_search import OpenAIFileSearch
from tests.helpers.openai_embeddings import FakeEmbeddings
from tests.helpers.openai_file_search import FakeFileSearch

SMALL = ChunkSettings(max_tokens=100, overlap_tokens=50)


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    folder = tmp_path / "set"
    folder.mkdir()
    filler = " ".join(f"paragraph{n} of the annual report" for n in range(60))
    (folder / "dy-2021.md").write_text(f"{filler} DY total assets were 1,944,165,000 in 2021. {filler}")
    (folder / "play-2021.md").write_text(f"{filler} PLAY net profit was 2,352,824,000. {filler}")
    (folder / "cn-2022.md").write_text("贵州茅台2022年营业总成本为49581000000元。" + "公司治理良好。" * 40)
    (folder / "index.md").write_text("| file | symbol |\n| dy-2021.md | DY |\n")
    return folder


def test_chunks_are_openais_static_windows():
    _, coder = encoding()
    text = " word" * 2000
    chunks = chunk_text(text, ChunkSettings())
    sizes = [len(coder.encode(chunk)) for chunk in chunks]
    assert sizes == [800, 800, 800, 800]
    assert coder.encode(chunks[1])[:400] == coder.encode(chunks[0])[400:]
    with pytest.raises(ValueError, match="chunk_overlap=500: from 0 to half"):
        ChunkSettings(max_tokens=800, overlap_tokens=500)


def test_chinese_is_cut_into_character_pairs_and_words_are_case_folded():
    assert terms("DY 营业总成本") == ["dy", "营业", "业总", "总成", "成本"]


def test_local_bm25_ranks_with_no_key_and_no_network(collection: Path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def refused(*args: object) -> None:
        raise AssertionError("the local back end opened a connection")

    monkeypatch.setattr(socket.socket, "connect", refused)
    retriever = make_retriever("local", SMALL)
    english = retriever.search(collection, "What were the total assets of DY?", 3)
    chinese = retriever.search(collection, "营业总成本", 1)
    assert english.chunks[0].file == "dy-2021.md" and "1,944,165,000" in english.chunks[0].text
    assert len(english.chunks) == 3 and english.chunks[0].score > english.chunks[-1].score
    assert [chunk.file for chunk in chinese.chunks] == ["cn-2022.md"] and "49581000000" in chinese.chunks[0].text
    assert all(chunk.file != "index.md" for chunk in retriever.search(collection, "DY symbol file", 100).chunks)
    assert retriever.search(collection, "What were the total assets of DY?", 3) == english


@pytest.fixture
def fake(monkeypatch) -> Iterator[FakeFileSearch]:
    server = FakeFileSearch(page_size=2)
    monkeypatch.setenv("OPENAI_API_KEY", server.key)
    server.start()
    yield server
    server.stop()


def test_file_search_uploads_polls_and_searches_through_the_sdk(collection: Path, fake: FakeFileSearch):
    retriever = make_retriever("openai", SMALL, fake.url)
    found = retriever.search(collection, "DY total assets 2021", 2)
    calls = [(method, path.split("/")[1] if "/" in path[1:] else path) for method, path, _ in fake.requests]
    assert calls[:2] == [("GET", "/vector_stores"), ("POST", "/vector_stores")]
    [(_, _, created)] = [request for request in fake.requests if request[:2] == ("POST", "/vector_stores")]
    assert created["chunking_strategy"] == {
        "type": "static",
        "static": {"max_chunk_size_tokens": 100, "chunk_overlap_tokens": 50},
    }
    uploads = [body for method, path, body in fake.requests if (method, path) == ("POST", "/files")]
    assert sorted(body["file"][0] for body in uploads) == ["cn-2022.md", "dy-2021.md", "play-2021.md"]
    assert {body["purpose"] for body in uploads} == {"assistants"}
    polls = [path for method, path, _ in fake.requests if method == "GET" and path.count("/") == 4]
    assert len(polls) == 2 * 3  # in progress once, then completed, for each file
    [search] = [body for method, path, body in fake.requests if path.endswith("/search")]
    assert search == {"query": "DY total assets 2021", "max_num_results": 2, "rewrite_query": True}
    assert next(chunk.file for chunk in found.chunks) == "dy-2021.md" and len(found.chunks) == 2
    assert found.source["usage_bytes"] == sum(path.stat().st_size for path in collection.iterdir()) - len(
        (collection / "index.md").read_bytes()
    )


def test_a_store_for_an_unchanged_set_is_found_again_across_list_pages(collection: Path, fake: FakeFileSearch):
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    for n in range(3):  # ours is now on the list's second page (two a page)
        fake.add_store(f"someone else's {n}")
    uploads = len(fake.files)
    fake.requests.clear()
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    pages = [path for method, path, _ in fake.requests if (method, path) == ("GET", "/vector_stores")]
    assert len(pages) >= 2 and len(fake.files) == uploads
    (collection / "dy-2021.md").write_text("changed")
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    assert len(fake.stores) == 5 and len(fake.files) == uploads + 3


def test_file_search_failures_are_the_services_in_one_line(collection: Path, fake: FakeFileSearch, monkeypatch):
    retriever = make_retriever("openai", SMALL, fake.url)
    retriever.search(collection, "DY", 1)
    fake.stores.clear()  # deleted behind its back (or expired)
    with pytest.raises(RetrievalFailed, match=r"^OpenAI File Search: 404 No vector store found with id 'vs_"):
        retriever.search(collection, "DY", 1)
    fake.fail_processing.add("play-2021.md")
    (collection / "dy-2021.md").write_text("another set")
    with pytest.raises(RetrievalFailed, match=r"could not process play-2021\.md: The file could not be parsed"):
        make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(RetrievalFailed, match=r"^OpenAI File Search: 401 Incorrect API key"):
        make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)


def test_delete_removes_the_store_and_its_files_page_by_page(collection: Path, fake: FakeFileSearch):
    retriever = OpenAIFileSearch(SMALL, fake.url)
    retriever.search(collection, "DY", 1)
    assert retriever.delete(collection) is True
    assert fake.stores == {} and fake.files == {}
    assert retriever.delete(collection) is False


def test_a_search_of_one_document_ranks_only_its_chunks_on_both_back_ends(collection: Path, fake: FakeFileSearch):
    for kind in ("local", "openai"):
        found = make_retriever(kind, SMALL, fake.url).search(collection, "DY total assets", 5, file="play-2021.md")
        assert found.chunks and {chunk.file for chunk in found.chunks} == {"play-2021.md"}, kind


def test_the_local_back_end_keeps_the_indexes_of_the_last_sets_only(tmp_path: Path, monkeypatch):
    built: list[str] = []
    retriever = make_retriever("local", SMALL)
    build = retriever._build  # type: ignore[attr-defined]
    monkeypatch.setattr(
        retriever, "_build", lambda folder, documents: built.append(folder.name) or build(folder, documents)
    )
    folders = []
    for n in range(KEPT_SETS + 1):
        folders.append(tmp_path / f"set{n}")
        folders[-1].mkdir()
        (folders[-1] / "a.md").write_text(f"document {n}")
    for folder in [folders[0], *folders[1:KEPT_SETS], folders[0], folders[KEPT_SETS], folders[0], folders[1]]:
        retriever.search(folder, "document", 1)
    # set0 stays (searched again before the ninth set came); set1, the least recent then, is dropped and built again
    assert built == [f"set{n}" for n in range(KEPT_SETS + 1)] + ["set1"]


def test_collection_delete_store_removes_a_sets_store_once(collection: Path, fake: FakeFileSearch, capsys):
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    command = ["collection", "delete-store", "set", "--collections-dir", str(collection.parent), "--api-base", fake.url]
    assert main(command) == 0 and fake.stores == {} and fake.files == {}
    assert main(command) == 1 and "no File Search store holds its documents" in capsys.readouterr().out


def test_another_chunking_gets_a_store_of_its_own(collection: Path, fake: FakeFileSearch):
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    make_retriever("openai", SMALL, fake.url).search(collection, "DY", 1)
    make_retriever("openai", ChunkSettings(), fake.url).search(collection, "DY", 1)
    assert sorted(store["metadata"]["harness_chunking"] for store in fake.stores.values()) == ["100/50", "800/400"]
    assert OpenAIFileSearch(SMALL, fake.url).delete(collection) is True and fake.stores == {}


@pytest.fixture
def embeddings() -> Iterator[FakeEmbeddings]:
    fake = FakeEmbeddings()
    fake.start()
    yield fake
    fake.stop()


def test_the_embeddings_back_end_ranks_by_an_openai_compatible_endpoint(collection: Path, embeddings, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a server of the user's own takes none
    monkeypatch.setattr(embeddings_module, "BATCH", 4)
    retriever = make_retriever("embeddings", SMALL, embeddings.url, "bow-64")
    english = retriever.search(collection, "DY total assets", 3)
    assert english.chunks[0].file == "dy-2021.md" and "1,944,165,000" in english.chunks[0].text
    assert english.chunks[0].score > english.chunks[-1].score and english.chunks[0].score <= 1.0 + 1e-9
    only = retriever.search(collection, "DY total assets", 5, file="play-2021.md")
    assert only.chunks and {chunk.file for chunk in only.chunks} == {"play-2021.md"}
    chunk_requests, queries = embeddings.requests[:-2], embeddings.requests[-2:]
    # the collection embedded once, BATCH (4 here) chunks a request at most, as floats; then one request a question
    assert sum(len(request["input"]) for request in chunk_requests) == english.source["chunks"]
    assert all(len(request["input"]) <= 4 for request in chunk_requests) and len(chunk_requests) >= 2
    assert [request["input"] for request in queries] == [["DY total assets"]] * 2
    assert {(request["model"], request["encoding_format"]) for request in embeddings.requests} == {("bow-64", "float")}
    assert retriever.settings()["ranking"].startswith("cosine of bow-64 embeddings")


@pytest.mark.parametrize(
    "answer",
    [
        (500, {"error": {"message": "overloaded", "type": "server_error"}}),
        (200, {"object": "list", "data": [], "model": "m"}),  # no vector for the input
        (200, {"object": "list", "data": [{"index": 0, "embedding": ["x"]}]}),
        (200, {"object": "list", "data": [{"index": 0, "embedding": [0.0, 0.0]}]}),
        (200, {"object": "list", "data": [{"embedding": [1.0]}]}),
        (200, ["not", "an", "object"]),
    ],
)
def test_an_embeddings_reply_that_cannot_be_used_is_the_services_failure(collection: Path, embeddings, answer):
    embeddings.reply = lambda body: answer
    retriever = make_retriever("embeddings", SMALL, embeddings.url, "bow-64")
    with pytest.raises(RetrievalFailed, match=r"^embeddings \(bow-64\): "):
        retriever.search(collection, "DY", 1)


def test_a_rag_run_with_embeddings_and_no_model_is_one_line_exit_2(mini):
    outcome = mini.run("--model", "oracle", "--solver", "rag", "--solver-arg", "retriever=embeddings")
    assert outcome.exit_code == 2 and "embedding_model=NAME" in outcome.output, outcome.output
    assert len(outcome.output.strip().splitlines()) == 1 and not outcome.run_dir.exists()
