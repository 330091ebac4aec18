-- 0004: who may approve an agent's tool calls, and which hosts on the
-- person's network fetch_url may reach (issue 12). Agents saved before
-- this change keep approvals on the desktop: the calling client approves
-- only where the person opts in.
ALTER TABLE agents ADD COLUMN client_may_approve INTEGER NOT NULL DEFAULT 0 CHECK (client_may_approve IN (0, 1));
-- A JSON array of exact "host:port" strings; empty reaches public
-- addresses only.
ALTER TABLE agents ADD COLUMN reachable_hosts TEXT NOT NULL DEFAULT '[]';
