package server

// Routes returns the patterns of s's /api routes, in registration order
// (the last one is the catch-all "/api/").
func Routes(s *Server) []string { return s.routes }
