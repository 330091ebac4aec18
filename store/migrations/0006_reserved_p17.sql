-- Placeholder on branch p17-activity only, so that 0009_activity runs
-- (versions run without gaps). At merge, delete this file: another
-- branch of issue 17 owns version 6.
SELECT 1;
