-- trim_events.lua - BullMQ's queue.trimEvents(maxLength): XTRIM of the
-- events stream, MAXLEN ~ ARGV[1] (whole stream nodes only, as BullMQ
-- asks). Returns how many entries went.
return rcall('XTRIM', K.events, 'MAXLEN', '~', ARGV[1])
