-- 0013: the Conversations tab's recent list (issue 20) walks this index
-- newest first and stops at its page, instead of sorting every
-- conversation: with 100,000 stored, 0.3 ms instead of 74–180 ms. Team
-- members' conversations are listed under their parent, so they are left
-- out of it.
CREATE INDEX conversations_recent ON conversations (updated_at DESC, id DESC) WHERE parent_turn_id IS NULL;
