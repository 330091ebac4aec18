-- Placeholder on branch p17-annotations only, so that 0008_agent_icon
-- runs (versions run without gaps). At merge, delete this file: another
-- branch of issue 17 owns version 7.
SELECT 1;
