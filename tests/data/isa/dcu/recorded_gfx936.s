; RECORDED DCU SAMPLE (gfx936) -- not produced on this machine; no Hygon DCU or DTK is reachable here.
; Every instruction line below is quoted from a public source listed in tests/data/isa/README.md
; (the project research notes on DTK tool formats, section 3.2). The layout (labels with
; "; @" comments, tab-indented instructions, s_endpgm) follows the gfx936 `hipcc -save-temps` .s
; fixture of LearnMF/kernel-roofline-analysis-tools. Where a source gave only a mnemonic, the operands
; are reconstructed in the shape of the quoted v_mmac lines and marked "operands reconstructed".
	.amdgcn_target "amdgcn-amd-amdhsa--gfx936"
	.type	_Z11k_mmac_bf16ILi8EEviPf,@function
_Z11k_mmac_bf16ILi8EEviPf:   ; @foo
	v_mmac_f32_16x16x16_bf16 v[0:3], v[4:5], v[4:5], v[0:3]
	s_endpgm
	.type	_Z12k_mmac_f32x8ILi8EEviPf,@function
_Z12k_mmac_f32x8ILi8EEviPf:
	v_mmac_16x16x8_f32 v[0:3], v[4:5], v[4:5], v[0:3]
	s_endpgm
	.type	_Z9mmac_testPDv4_f,@function
_Z9mmac_testPDv4_f:          ; DTK doc example, __builtin_hcu_mmac_f32_16x16x16_bf16
	v_mmac_f32_16x16x16_bf16 v[0:3], v[6:7], v[4:5], v[0:3]
	s_endpgm
	.type	_Z17gemm_f16_pipelinev,@function
_Z17gemm_f16_pipelinev:      ; Hygon hand-written inline-asm GEMM template ($N = asm operands)
	buffer_load_dwordx4 v[48:51], $33, s[36:39], s45 offen
	s_waitcnt vmcnt(0)
	ds_write_b128 $26, v[32:35]
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b64 v[16:17], $41
	ds_read_m32x16_b16 v[20:23], $43
	s_waitcnt lgkmcnt(3)
	v_mmac_f32_16x16x16_f16 v[0:3], v[20:21], v[16:17], v[0:3]
	s_endpgm
	.type	_Z15lds_direct_loadv,@function
_Z15lds_direct_loadv:        ; inline asm templates from public DCU kernels (%N = asm operands)
	s_mov_b32 m0, s0
	buffer_load_dword %0, %2, %3 ,offen offset:0, lds
	s_waitcnt vmcnt(%0)
	ds_read_matrix_format %0, m0 offset:0 element:0x2 row:0x2 col:0x1 alt:0x0
	s_setprio 1
	s_waitcnt lgkmcnt(0)
	s_endpgm
	.type	_Z10microbenchv,@function
_Z10microbenchv:             ; mnemonics counted by a gfx936 microbenchmark ISA check; operands reconstructed
	v_mmac_f32_16x16x16_f16 v[0:3], v[4:5], v[4:5], v[0:3]
	v_mmac_f32_16x16x8_tf32 v[0:3], v[4:5], v[4:5], v[0:3]
	v_mmac_i32_16x16x32_i8 v[0:3], v[4:5], v[4:5], v[0:3]
	v_mmac_f32_16x16x32_fp8_fp8 v[0:3], v[4:5], v[4:5], v[0:3]
	v_pk_fma_f32 v[0:1], v[2:3], v[4:5], v[0:1]
	v_exp_f32_e32 v0, v1
	global_load_dwordx4 v[0:3], v[4:5], off
	global_store_dwordx4 v[4:5], v[0:3], off
	ds_read_b128 v[0:3], v4
	s_barrier
	s_endpgm
