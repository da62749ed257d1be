"""Monte-Carlo tree search: the tree and the playout policy. The search issue builds it here.

May import: engine.rules, engine.nets."""
