package tools

func (s *Set) fileInfoTool() *Tool { return pendingTool("file_info") }
