"""Search by meaning on every backend (with ``test_hybrid.Concepts``, a small embedder): the
vectors are kept, and without an embedder "hybrid" is exactly the keyword ranking.
"""

from __future__ import annotations

from backends import Opener
from test_hybrid import Concepts


def test_search_by_meaning_and_its_vectors_are_kept(opener: Opener) -> None:
    first = Concepts()
    store = opener(embedder=first)
    ns = store.namespace("users/1")
    ns.add("Shopping list: milk, eggs")
    ns.add("The cat sleeps on the sofa")
    ns.add("Dentist appointment on Friday")
    assert store.namespace("users/1").wait_for_embeddings(10)
    assert ns.search("what do I need to buy?", touch=False) == []  # no shared word
    hits = ns.search("what do I need to buy?", ranker="hybrid", touch=False)
    assert hits[0].memory.content == "Shopping list: milk, eggs"
    status = ns.search_status()
    assert (status.mode, status.embedded, status.total) == ("hybrid", 3, 3)
    store.close()
    again = Concepts()
    ns = opener(embedder=again).namespace("users/1")
    hits = ns.search("what to buy", ranker="hybrid", touch=False)
    assert hits[0].memory.content == "Shopping list: milk, eggs"
    assert ns.wait_for_embeddings(10)
    assert again.passages == 0  # the vectors were kept: nothing embedded twice


def test_without_an_embedder_hybrid_is_the_keyword_ranking(opener: Opener) -> None:
    ns = opener().namespace("users/1")
    for i in range(20):
        ns.add(f"note {i} about project {i % 7} and the cat {i % 3}")
    hybrid = ns.search("project 3 cat", ranker="hybrid", touch=False)
    default = ns.search("project 3 cat", touch=False)
    assert [(h.memory.id, h.score) for h in hybrid] == [(h.memory.id, h.score) for h in default]
    assert ns.search_status().mode == "keywords"
