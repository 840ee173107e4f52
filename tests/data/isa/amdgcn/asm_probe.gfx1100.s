	.text
	.globl rdna3_ops
	.type rdna3_ops,@function
rdna3_ops:
	global_load_b128 v[0:3], v[4:5], off
	global_store_b128 v[4:5], v[0:3], off
	ds_store_b32 v1, v2
	ds_load_b32 v3, v1
	v_wmma_f32_16x16x16_f16 v[0:7], v[8:15], v[16:23], v[0:7]
	s_waitcnt vmcnt(1) lgkmcnt(0)
	s_endpgm
