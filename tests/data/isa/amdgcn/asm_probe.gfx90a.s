	.text
	.globl buffer_ops
	.type buffer_ops,@function
buffer_ops:
	buffer_load_dwordx4 v[0:3], v4, s[0:3], 0 offen
	buffer_load_dwordx2 v[6:7], v4, s[0:3], 0 offen offset:16
	buffer_load_dword v4, s[0:3], 0 offen lds
	s_waitcnt vmcnt(0)
	buffer_store_dwordx4 v[0:3], v4, s[8:11], 0 offen
	buffer_atomic_add v5, v4, s[0:3], 0 offen
	scratch_load_dword v9, off, s2
	scratch_store_dword off, v9, s2 offset:8
	v_accvgpr_write_b32 a0, v1
	v_accvgpr_read_b32 v1, a0
	s_endpgm
