-- 0008: an agent's icon (issue 17), served as its tool's "icons": an
-- emoji as typed, or an image as a data: URI (PNG, JPEG or SVG, at most
-- 64 KiB decoded). Empty: no icon. Agents saved before have none.
ALTER TABLE agents ADD COLUMN icon TEXT NOT NULL DEFAULT '';
