"""Preprocessing that needs neither torch nor the encoders' libraries: text folding, numeric metadata features and
the resize-and-crop of pictures, shared by the encoders (which wrap their output in tensors) and ``faim.runtime``
(which scores exported models without torch)."""
