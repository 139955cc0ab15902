-- The webcrawl crawl database, schema version 7.
--
-- THE one place the schema is documented.  One SQLite file per crawl, written by
-- webcrawl.storage.store.CrawlStore (aiosqlite) and read by webcrawl.storage.reader.CrawlReader and
-- webcrawl.analysis.graph.loader.load_graph.  Any change to a table below bumps SCHEMA_VERSION in
-- storage/_sqlite.py and the number in the first line; a file written by another
-- version is refused with webcrawl.storage.errors.SchemaVersionError, except the versions
-- webcrawl.storage._sqlite.MIGRATABLE lists: readers read them as they are (the tables they
-- lack read as empty) and the writer upgrades them when it opens them to resume.
--
-- History: 1 -> 2 (issue 21) added the tables link_cuts and url_sources (additive:
-- a version 1 file is upgraded by creating them).  2 -> 3 (issue 16, link history)
-- added links.fetch_id and the table link_versions (a file of version 1 or 2 is
-- upgraded by ALTER TABLE links ADD COLUMN fetch_id, webcrawl.storage._sqlite.ADDED_COLUMNS,
-- and creating the table; readers of an older file see no link history).  3 -> 4
-- added the view edges (nothing stored; a file of version 1 to 3 gets it when the
-- writer opens it to resume, or from `sqlite3 crawl.db < storage/schema.sql`).
-- 4 -> 5 added urls.duplicate_of (the content-seen test; a file of version 1 to 4
-- gets the column, all NULL, when the writer opens it to resume: its pages were
-- never tested, and readers of an older file see no duplicates).
-- 5 -> 6 added the table link_blocks (an imported graph's links) and the view edges
-- reads it too (a file of version 1 to 5 is read as it is: it has no link_blocks,
-- and gets the table and the new view when the writer opens it to resume).
-- 6 -> 7 added the table id_ranges (the names of an imported graph of integer ids,
-- which then has no urls rows) and the view edges reads it too (a file of version 1
-- to 6 is read as it is: its nodes are urls rows, and it gets the empty table and
-- the new view when the writer opens it to resume).
--
-- Connection settings (set by the writer on every open, not stored here):
--   PRAGMA journal_mode = WAL      readers (analysis) run while the crawl writes
--   PRAGMA synchronous  = NORMAL   a commit survives a process crash (kill -9);
--                                  an OS crash may lose the last commits, never
--                                  corrupt the file
--   PRAGMA foreign_keys = OFF      ids are assigned by the crawler; the writer
--                                  trusts them (checked in tests, not per row)
--
-- Writes are batched: each batch of enqueued records is ONE transaction, so the
-- records of one fetch (its fetch row, new URLs, links, outcome) land together or
-- not at all.
--
-- Conventions
--   * Times are wall-clock seconds since the Unix epoch (REAL).
--   * seq is the crawl sequence number: the order in which the crawler took URLs
--     from the frontier (0, 1, 2, ...).  Retries of one URL share its seq.
--   * URLs are stored normalised (webcrawl.crawler.urls.normalize_url); hosts as
--     webcrawl.crawler.urls.host_key (host[:port]).
--   * Enumerations are stored as their string values (webcrawl.storage.records.Outcome,
--     webcrawl.storage.records.FetchKind).

-- Crawl-level key/value facts.  Keys written by the store: schema_version,
-- created_at.  Keys written by the crawler (documented there): settings (JSON),
-- seeds (JSON list of URLs), strategy, shard_host:<host[:port]> (a sharded crawl's
-- worker of the host), robots_unreachable:<host[:port]> (why the host's robots.txt
-- could not be fetched: 'connection refused', 'no address', 'TLS: ...', 'HTTP 503';
-- empty once it was fetched again; the cause of its URLs' outcome
-- 'robots_unreachable'), ...
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

-- One row per host (host[:port]) with its politeness state.
CREATE TABLE IF NOT EXISTS hosts (
    id                INTEGER PRIMARY KEY,   -- assigned by the crawler
    name              TEXT NOT NULL UNIQUE,  -- host[:port]
    robots_status     INTEGER,               -- HTTP status of /robots.txt; NULL: not fetched
    robots_body       TEXT,                  -- robots.txt as fetched (NULL if none)
    robots_fetched_at REAL,
    crawl_delay       REAL                   -- effective Crawl-delay, seconds (NULL: none)
);

-- Every URL the crawl discovered.  This table IS the seen-set, and the rows with
-- outcome IS NULL are the persisted frontier (discovered, not yet finished).
CREATE TABLE IF NOT EXISTS urls (
    id             INTEGER PRIMARY KEY,      -- assigned by the crawler; the node id everywhere
    url            TEXT NOT NULL UNIQUE,
    host_id        INTEGER NOT NULL,         -- hosts.id
    depth          INTEGER NOT NULL,         -- link distance from the nearest seed (seeds: 0)
    discovered_seq INTEGER NOT NULL,         -- seq of the fetch that discovered it; -1: a seed;
                                             -- -2: listed in a sitemap (see url_sources)
    outcome        TEXT,                     -- webcrawl.storage.records.Outcome; NULL while in the frontier
                                             -- (robots_unreachable, added without a version
                                             -- change: older files never hold it)
    seq            INTEGER,                  -- seq of its final crawl fetch (NULL if never taken)
    duplicate_of   INTEGER                   -- urls.id of the page whose body this page's
                                             -- body repeats byte for byte (NULL: none)
);
-- duplicate_of is the content-seen test (webcrawl.crawler.content_seen): a fetched
-- HTML page whose body digest (fetches.digest of its latest fetch) equals the digest
-- of a page fetched earlier is a duplicate of the FIRST page that holds that body
-- (never of another duplicate).  Scheme and host aliases (http/https, www.) are found
-- this way, never assumed.  A duplicate's links are not read unless the crawl set
-- links_from_duplicates (then its links row is stored as for any page).  A revisit
-- re-tests the page: it may become a duplicate, or stop being one; when the first
-- page's body changes, the next page holding that body becomes the first.  The
-- analysis loader collapses every duplicate into its first page (--duplicates).

-- One row per fetch attempt (crawl fetches, their retries, and revisits): every
-- field of webcrawl.storage.records.FetchRecord.  The final crawl fetch of URL u is the row
-- with url_id = u.id, seq = u.seq, kind = 'crawl' and the highest attempt.
-- Revisits (incremental crawling) are rows with kind = 'revisit' and `changed` set;
-- a URL's visit history is its rows in seq order.
CREATE TABLE IF NOT EXISTS fetches (
    id            INTEGER PRIMARY KEY,       -- insertion order
    url_id        INTEGER NOT NULL,          -- urls.id
    seq           INTEGER NOT NULL,
    started_at    REAL NOT NULL,
    ended_at      REAL NOT NULL,
    outcome       TEXT NOT NULL,             -- webcrawl.storage.records.Outcome
    status        INTEGER,                   -- HTTP status; NULL when no response
    content_type  TEXT,
    size          INTEGER,                   -- body bytes read
    digest        TEXT,                      -- hex digest of the (normalised) body
    etag          TEXT,
    last_modified TEXT,                      -- the Last-Modified header, verbatim
    error         TEXT,                      -- error class name, and a transport failure's
                                             -- cause: 'NetworkError: connection refused'
    attempt       INTEGER NOT NULL,          -- 1 for the first try, 2.. for retries
    kind          TEXT NOT NULL,             -- 'crawl' | 'revisit'
    strategy      TEXT,                      -- crawl ordering that chose it
    priority      REAL,                      -- the URL's priority when taken
    rank          INTEGER,                   -- its rank among frontier URLs when taken (0 = best)
    changed       INTEGER                    -- revisits: 1 changed, 0 unchanged, NULL unknown
);
CREATE INDEX IF NOT EXISTS fetches_url_id ON fetches (url_id);

-- Out-links of every fetched HTML page (and of every redirect: its target is its
-- one link), one row per source page.  Layout chosen for the analysis loader:
-- 10M links load in about 0.9 s from per-page arrays, 4.6-9 s from a row per link.
--   dst       little-endian int32 array of destination urls.id, in document order,
--             duplicates kept (a page may link twice to the same URL)
--   nofollow  little-endian int32 array of the destination ids whose link carried
--             rel=nofollow (or the page's meta robots nofollow); NULL when none.
--             Link src -> d is a nofollow link iff d is in src's nofollow array.
--   fetch_id  fetches.id of the fetch whose response gave these links (NULL for an
--             imported edge list and for rows written before version 3).
-- This is the page's LATEST link set (what the loader reads by default).  A later
-- fetch of the page (a revisit) whose links differ moves the row to link_versions
-- and takes its place; a fetch with the same links leaves it as it is.
CREATE TABLE IF NOT EXISTS links (
    src      INTEGER PRIMARY KEY,            -- urls.id of the page
    dst      BLOB NOT NULL,
    nofollow BLOB,
    fetch_id INTEGER
);

-- The links of a graph imported from an edge list whose nodes are integer ids or
-- plain names (meta names = 'ids' or 'names': nothing can crawl such a file, see
-- webcrawl.storage.edgelist), instead of a links row per page: every link of the file
-- in one sequence, grouped by source page (ascending ids), file order within a page,
-- duplicates and self-loops kept, cut into blocks of LINK_BLOCK = 1024 links (the last
-- one shorter).  A row per page costs an import about a microsecond a page twice over
-- (the row, and copying it); a block costs that per 1024 links.  Blocks stay small
-- because SQLite reads a whole value to take substr() of it: the edges view decodes
-- one link per row (measured: 0.4 us a link from a 1 KB value, 1.9 ms from 4 MB).
--   first  index of the block's first link in the sequence (0, 1024, 2048, ...)
--   src    little-endian int32 array of the links' source urls.id (ascending)
--   dst    little-endian int32 array of their destination urls.id, same length
-- Such a file has no links rows (and no nofollow, link history or fetches), and its
-- urls table is created without the UNIQUE constraint on url (names are distinct by
-- construction; a look-up by URL scans): its nodes cost a row each, not an index
-- entry.  Readers take a page's links from both tables (a file has one or the other).
CREATE TABLE IF NOT EXISTS link_blocks (
    first INTEGER PRIMARY KEY,
    src   BLOB NOT NULL,
    dst   BLOB NOT NULL
);

-- The nodes of a graph imported from an edge list of integer ids (meta names = 'ids'),
-- instead of a urls row per node: such a file has no urls rows (a row a node cost the
-- import about a third of its time), and node i is named by its id in the file.
-- Nodes are the file's distinct ids in ascending order, numbered 0, 1, 2, ...; a row
-- per run of consecutive ids (one row when the file numbers its nodes 0..n-1 with no
-- gap, as published graphs do): nodes first .. first + count - 1 are the file's ids
-- id .. id + count - 1.  What the urls row of node i would hold is implied:
--   url             the id as decimal text (what the edges view shows)
--   host_id 0 (the empty host name), depth -1, seq NULL, duplicate_of NULL
--   discovered_seq  -1 for the seeds (meta seeds: their ids as text), else 0
--   outcome         'fetched' for every node if meta pages = 'all' (import edges'
--                   default), else 'fetched' if the node has links in link_blocks,
--                   else NULL
-- webcrawl.storage.reader.CrawlReader reads such a file as if it had the rows.
CREATE TABLE IF NOT EXISTS id_ranges (
    first INTEGER PRIMARY KEY,               -- urls.id of the run's first node
    id    INTEGER NOT NULL,                  -- its id in the edge file
    count INTEGER NOT NULL                   -- nodes in the run
);

-- Earlier link sets of pages whose links changed (link history), one row per
-- superseded version: the same layout as links, the fetch it came from and the fetch
-- that replaced it.  A page's versions in time order are its link_versions rows by
-- fetch_id, then its links row.
CREATE TABLE IF NOT EXISTS link_versions (
    src           INTEGER NOT NULL,          -- urls.id of the page
    fetch_id      INTEGER,                   -- fetches.id that gave this version
    superseded_by INTEGER NOT NULL,          -- fetches.id whose links replaced it
    dst           BLOB NOT NULL,
    nofollow      BLOB
);
CREATE INDEX IF NOT EXISTS link_versions_src ON link_versions (src);

-- Pages whose out-links were cut at links_max_per_page (webcrawl.crawler.settings): their
-- links row holds only the first `kept` distinct targets, in document order; `dropped`
-- more distinct targets were not recorded (counted up to 100,000).  A page
-- not in this table kept every link.  A later fetch of the page replaces its row.
CREATE TABLE IF NOT EXISTS link_cuts (
    src     INTEGER PRIMARY KEY,            -- urls.id of the page
    kept    INTEGER NOT NULL,
    dropped INTEGER NOT NULL
);

-- URLs discovered from another source than a link or a seed (issue 21: sitemaps):
-- one row per such URL, for the first source that found it.
CREATE TABLE IF NOT EXISTS url_sources (
    url_id INTEGER PRIMARY KEY,             -- urls.id
    source TEXT NOT NULL,                   -- 'sitemap'
    via    TEXT NOT NULL                    -- the sitemap URL that listed it
);

-- 0..1023, the link positions the edges view counts with (three of them address
-- 1024^3 links, more than SQLite's largest value holds as an int32 array).
CREATE TABLE IF NOT EXISTS link_positions (
    k INTEGER PRIMARY KEY
);
INSERT OR IGNORE INTO link_positions (k)
    WITH RECURSIVE n (k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM n WHERE k < 1023)
    SELECT k FROM n;

-- Every stored link as one row, for tools that read SQL but not our int32 arrays
-- (the sqlite3 shell, sqlite-utils, DuckDB's SQLite scanner, pandas.read_sql):
--   SELECT src_url, dst_url FROM edges;
-- A view: it stores nothing, so it costs a crawl or an import nothing.  Its rows are
-- the links of the links table and of link_blocks (every stored link of every page:
-- duplicates, self-loops, redirects and nofollow links included; `SELECT count(*)
-- FROM edges` is the stored link count); `position` orders a page's links in
-- document order: the link's index in its page's array for a links row, its index
-- in the whole sequence for link_blocks (an imported file's order).  It decodes the
-- arrays in SQL (docs/results/scale.md measures it); for bulk work use `webcrawl
-- export edges --format parquet` or the Python loader.  How: position = (a * 1024 +
-- b) * 1024 + c for a, b, c in link_positions, each joined by a range on its primary
-- key (O(k) rows for a page of k links); the 4 bytes at that position are read
-- through hex() (stock SQLite has no function that reads an integer from a BLOB).
-- The two tables are read as one by joining t.k = 0 (links) and t.k = 1 (link_blocks,
-- each block read as a page of at most 1024 links whose sources are its src array).
-- A node's URL is its urls row's, else (an imported graph of integer ids) its id from
-- the id_ranges run that holds it (a primary-key search); each id is decoded once,
-- in the subquery x (referring to e.src three times decoded it three times: 2.6 times
-- slower).
-- Plain joins and subqueries only: DuckDB's SQLite scanner re-parses a view, and
-- cannot pass on a recursive query (it rewrote one into SQL SQLite rejects) nor a
-- UNION ALL (it puts each side in parentheses, which SQLite rejects).
CREATE VIEW IF NOT EXISTS edges (src, dst, position, src_url, dst_url) AS
SELECT e.src AS src, e.dst AS dst, e.position AS position,
       (SELECT ifnull((SELECT url FROM urls WHERE id = x.v), CAST(x.v + (SELECT r.id - r.first
               FROM id_ranges AS r WHERE r.first <= x.v ORDER BY r.first DESC LIMIT 1) AS TEXT))
        FROM (SELECT e.src AS v) AS x) AS src_url,
       (SELECT ifnull((SELECT url FROM urls WHERE id = x.v), CAST(x.v + (SELECT r.id - r.first
               FROM id_ranges AS r WHERE r.first <= x.v ORDER BY r.first DESC LIMIT 1) AS TEXT))
        FROM (SELECT e.dst AS v) AS x) AS dst_url
FROM (SELECT CASE WHEN link.src IS NOT NULL THEN link.src ELSE
             (instr('123456789ABCDEF', substr(link.hs, 1, 1)) * 16 + instr('123456789ABCDEF', substr(link.hs, 2, 1))) * 1
         + (instr('123456789ABCDEF', substr(link.hs, 3, 1)) * 16 + instr('123456789ABCDEF', substr(link.hs, 4, 1))) * 256
         + (instr('123456789ABCDEF', substr(link.hs, 5, 1)) * 16 + instr('123456789ABCDEF', substr(link.hs, 6, 1))) * 65536
         + (instr('123456789ABCDEF', substr(link.hs, 7, 1)) * 16 + instr('123456789ABCDEF', substr(link.hs, 8, 1))) * 16777216 END AS src,
             (instr('123456789ABCDEF', substr(link.h, 1, 1)) * 16 + instr('123456789ABCDEF', substr(link.h, 2, 1))) * 1
         + (instr('123456789ABCDEF', substr(link.h, 3, 1)) * 16 + instr('123456789ABCDEF', substr(link.h, 4, 1))) * 256
         + (instr('123456789ABCDEF', substr(link.h, 5, 1)) * 16 + instr('123456789ABCDEF', substr(link.h, 6, 1))) * 65536
         + (instr('123456789ABCDEF', substr(link.h, 7, 1)) * 16 + instr('123456789ABCDEF', substr(link.h, 8, 1))) * 16777216 AS dst,
             link.position AS position
      FROM (SELECT l.src AS src, ifnull(k.first, 0) + (a.k * 1024 + b.k) * 1024 + c.k AS position,
                   hex(substr(k.src, c.k * 4 + 1, 4)) AS hs,
                   hex(substr(ifnull(l.dst, k.dst), ((a.k * 1024 + b.k) * 1024 + c.k) * 4 + 1, 4)) AS h
            FROM link_positions AS t
            LEFT JOIN links AS l ON t.k = 0
            LEFT JOIN link_blocks AS k ON t.k = 1
            JOIN link_positions AS a ON a.k <= (length(ifnull(l.dst, k.dst)) / 4 - 1) / 1048576
            JOIN link_positions AS b ON b.k <= (length(ifnull(l.dst, k.dst)) / 4 - 1) / 1024 - a.k * 1024
            JOIN link_positions AS c ON c.k < length(ifnull(l.dst, k.dst)) / 4 - (a.k * 1024 + b.k) * 1024
            WHERE t.k < 2 AND length(ifnull(l.dst, k.dst)) >= 4) AS link) AS e;
