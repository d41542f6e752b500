"""EditingRTC: can a model describe an edit and re-create it from its description?"""
