; RECORDED DCU SAMPLE (gfx938) -- not produced on this machine; no Hygon DCU or DTK is reachable here.
; The instruction line is quoted verbatim from an inline-asm template in public CK Tile code for
; gfx938 (an MLS tile load straight into LDS; %N are the asm operands, as in the source). The
; function frame around it follows recorded_gfx936.s. See tests/data/isa/README.md.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx938"
	.type	_Z13mls_load_tilev,@function
_Z13mls_load_tilev:          ; inline asm template (%N = asm operands)
	matrix_load_32x32_b16 %0, %1, moffset:%2, bps lds
	s_endpgm
