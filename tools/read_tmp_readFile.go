package tools

func (s *Set) readFileTool() *Tool { return pendingTool("read_file") }
