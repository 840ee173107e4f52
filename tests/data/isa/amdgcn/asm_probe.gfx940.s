	.text
	.globl fp8_ops
	.type fp8_ops,@function
fp8_ops:
	v_cvt_pk_fp8_f32 v1, v2, v3
	v_cvt_pk_bf8_f32 v1, v2, v3
	v_cvt_sr_fp8_f32 v1, v2, v3
	v_cvt_f32_fp8_e32 v1, v2
	v_mfma_f32_16x16x32_fp8_fp8 v[0:3], v[4:5], v[6:7], v[0:3]
	v_mfma_f32_16x16x8_xf32 v[0:3], v[4:5], v[6:7], v[0:3]
	s_endpgm
	global_load_dword v1, v[2:3], off sc0 sc1 nt
	global_store_dword v[2:3], v1, off nt
	s_endpgm
