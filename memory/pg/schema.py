"""The PostgreSQL store's schema, created and migrated by the store itself.

Migrations are numbered and applied in order, each once, recorded in ``memory_migrations``.
They run when a store opens, in one transaction under a transaction-level advisory lock
(``pg_advisory_xact_lock``), so replicas starting together wait for each other and apply each
migration once; DDL is transactional in PostgreSQL, so a start-up killed midway leaves the
schema as it was. A migration is never edited once released: a change is a new one.

Tables:

- ``memory_namespaces``: one row per namespace that was ever written. ``version`` goes up by
  one with every change (a put, a delete, a search's touch) and ``high_id`` is the highest id
  the namespace has seen within a day of then (its id clock, ``memory.ids``). Every write
  locks this row first (``UPDATE ... RETURNING``), which serialises the namespace's writers
  across replicas and hands out ids.
- ``memories``: the memories, with the article's fields; ``seq`` keeps the stored order,
  ``changed`` the namespace version that last changed the row. A delete keeps a tombstone
  (``deleted``, content emptied) so that a replica caching the namespace learns of it by
  reading the rows changed since its version.
- ``documents``: JSON documents as text (the file store's bytes, so versions are comparable
  and key order kept), ``scope`` the namespace name or ``''`` for the bot's own documents (no
  namespace name is empty). ``version`` comes from a sequence, so a deleted and re-created
  document never repeats an old version.
- ``record_logs``: the bot's append-only logs, one row a record, ordered by ``seq``.
- ``memory_history`` (2): each namespace's change records (``memory.history.ChangeRecord``,
  the file store's JSON shape), inserted in the transaction of the change they record, kept
  within the store's retention.
- ``memory_vectors`` (2): each namespace's embeddings, one row per model, size and text key
  (``memory.vectors.text_key``), the vector as little-endian float32 bytes.
- ``bot_updates`` (3): the updates the replicas received (``memory.pg.updates``), one row per
  Telegram update id, in the ``lane`` of its chat; ``state`` ``waiting``, ``done`` (the body
  emptied, the row kept a day to recognise a second delivery) or ``aside`` (poison, kept);
  ``namespace`` (5) the namespace it reads and changes, as the replica that received it named
  it (NULL: none, or a replica from before), whose version the statement starting it reads.
- ``bot_lanes`` (3): the leases: the replica (``owner``) handling a chat's updates until
  ``until`` (the database's clock), under a ``token`` from a sequence; ``started`` (4) the
  update the lease started last, whose try a clean stop gives back; ``kept`` (5) how many
  updates were kept for the lane while it was leased, so that its holder never gives it back
  over one it could not see yet.
"""

from __future__ import annotations

from typing import Any

LOCK_KEY = 0x6D656D6F7279  # "memory": the advisory lock taken while migrating

MIGRATIONS: tuple[str, ...] = (
    # 1: the first schema.
    """
    CREATE TABLE memory_namespaces (
        name text PRIMARY KEY,
        version bigint NOT NULL DEFAULT 0,
        high_id bigint NOT NULL DEFAULT 0
    );
    CREATE SEQUENCE memory_seq;
    CREATE TABLE memories (
        namespace text NOT NULL REFERENCES memory_namespaces (name),
        id bigint NOT NULL,
        seq bigint NOT NULL,
        changed bigint NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        content text NOT NULL,
        tags text[] NOT NULL,
        category text NOT NULL,
        created_at text NOT NULL,
        accessed_at text NOT NULL,
        access_count bigint NOT NULL,
        updated_at text,
        source text,
        PRIMARY KEY (namespace, id)
    );
    CREATE INDEX memories_changed ON memories (namespace, changed);
    CREATE SEQUENCE document_versions;
    CREATE TABLE documents (
        scope text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        version bigint NOT NULL,
        PRIMARY KEY (scope, key)
    );
    CREATE TABLE record_logs (
        name text NOT NULL,
        seq bigserial NOT NULL,
        record text NOT NULL,
        PRIMARY KEY (name, seq)
    );
    """,
    # 2: the fields main's Memory gained (date, attachment, origin as JSON text), the change
    # history (``memory.history`` records, one JSON row each) and the embeddings.
    """
    ALTER TABLE memories ADD COLUMN date text, ADD COLUMN attachment text,
        ADD COLUMN origin text;
    CREATE TABLE memory_history (
        namespace text NOT NULL,
        seq bigserial NOT NULL,
        at text NOT NULL,
        record text NOT NULL,
        PRIMARY KEY (namespace, seq)
    );
    CREATE TABLE memory_vectors (
        namespace text NOT NULL,
        model text NOT NULL,
        dimensions integer NOT NULL,
        key bytea NOT NULL,
        vector bytea NOT NULL,
        PRIMARY KEY (namespace, model, dimensions, key)
    );
    """,
    # 3: the updates shared by bot replicas, and the per-chat leases that order them.
    """
    CREATE TABLE bot_updates (
        update_id bigint PRIMARY KEY,
        lane text NOT NULL,
        body text NOT NULL,
        state text NOT NULL DEFAULT 'waiting' CHECK (state IN ('waiting', 'done', 'aside')),
        tries integer NOT NULL DEFAULT 0,
        received_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        reason text
    );
    CREATE INDEX bot_updates_waiting ON bot_updates (update_id) WHERE state = 'waiting';
    CREATE INDEX bot_updates_lane ON bot_updates (lane, update_id) WHERE state = 'waiting';
    CREATE INDEX bot_updates_done ON bot_updates (finished_at) WHERE state = 'done';
    CREATE SEQUENCE bot_lane_tokens;
    CREATE TABLE bot_lanes (
        lane text PRIMARY KEY,
        token bigint NOT NULL,
        owner text NOT NULL,
        until timestamptz NOT NULL
    );
    """,
    # 4: the update a lease started last: a claim and each next step start one in the same
    # statement, so a clean stop learns from the lease which try to give back.
    """
    ALTER TABLE bot_lanes ADD COLUMN started bigint;
    """,
    # 5: the namespace an update reads and changes, named by the replica that kept it, so that
    # the statement starting the update also reads the namespace's version (issue 28); and
    # how many updates were kept for a lane while leased, so that its holder never gives it
    # back over one it could not see yet.
    """
    ALTER TABLE bot_updates ADD COLUMN namespace text;
    ALTER TABLE bot_lanes ADD COLUMN kept bigint NOT NULL DEFAULT 0;
    """,
)


def migrate(connection: Any) -> list[int]:
    """Bring the schema up to date on ``connection`` (in its transaction); the versions applied."""
    connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
    connection.execute(
        "CREATE TABLE IF NOT EXISTS memory_migrations ("
        " version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
    )
    done = {row[0] for row in connection.execute("SELECT version FROM memory_migrations")}
    applied = []
    for number, script in enumerate(MIGRATIONS, start=1):
        if number in done:
            continue
        connection.execute(script)
        connection.execute("INSERT INTO memory_migrations (version) VALUES (%s)", (number,))
        applied.append(number)
    return applied
