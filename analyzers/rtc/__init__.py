"""Round-trip correctness, generic over the task: the loop, the similarity of texts, and the leak check."""
