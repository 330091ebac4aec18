-- 0003: agents' starter prompts (issue 6), served to MCP clients as
-- prompts. A JSON array of strings.
ALTER TABLE agents ADD COLUMN starter_prompts TEXT NOT NULL DEFAULT '[]';
