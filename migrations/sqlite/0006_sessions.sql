-- Browser sessions (issue 12): the cookie holds a random id; only its
-- SHA-256 is stored. A session ends at expires_at or when revoked (logout,
-- "log out everywhere"); revoked and expired rows are purged at login.
CREATE TABLE harness_sessions (
    id_hash     TEXT PRIMARY KEY NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    revoked_at  INTEGER
) WITHOUT ROWID;
