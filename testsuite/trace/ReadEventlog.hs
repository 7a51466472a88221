-- Reads an eventlog with the ghc-events library (the reader ThreadScope, ghc-events show and
-- eventlog2html are built on), decoding every event, and prints what it counted:
--
--   read-eventlog FILE
--
-- "events N (rtslab's own: U); GCs: minor X, major Y; threads: created C, finished F,
-- migrated M; capabilities K", or the library's error and exit 1. Minor and major GCs are
-- counted from GC_STATS_GHC (generation 0, or older); rtslab's own event types are the ones
-- the library does not know (UnknownEvent), skipped by the sizes the header declares.
-- Built and run by eventlog_ghc_events.py (testsuite/trace/TESTS, needs=ghc-events).
{-# LANGUAGE BangPatterns #-}
module Main (main) where

import qualified Data.ByteString.Lazy as BL
import qualified Data.Set as Set
import Data.List (foldl')
import GHC.RTS.Events
import GHC.RTS.Events.Incremental (readEventLog)
import System.Environment (getArgs)
import System.Exit (exitFailure)
import System.IO (hPutStrLn, stderr)

data Counts = Counts
  { nEvents, nUnknown, nMinor, nMajor, nCreated, nFinished, nMigrated :: !Int
  , caps :: !(Set.Set Int)
  }

count :: Counts -> Event -> Counts
count c ev =
  let c' = c { nEvents = nEvents c + 1
             , caps = maybe (caps c) (`Set.insert` caps c) (evCap ev) }
  in case evSpec ev of
       UnknownEvent {}                       -> c' { nUnknown = nUnknown c' + 1 }
       GCStatsGHC { gen = g } | g == 0       -> c' { nMinor = nMinor c' + 1 }
                              | otherwise    -> c' { nMajor = nMajor c' + 1 }
       CreateThread {}                       -> c' { nCreated = nCreated c' + 1 }
       StopThread { status = ThreadFinished } -> c' { nFinished = nFinished c' + 1 }
       MigrateThread {}                      -> c' { nMigrated = nMigrated c' + 1 }
       _                                     -> c'

main :: IO ()
main = do
  args <- getArgs
  path <- case args of
    [p] -> return p
    _   -> hPutStrLn stderr "usage: read-eventlog FILE" >> exitFailure
  bytes <- BL.readFile path
  case readEventLog bytes of
    Left err -> hPutStrLn stderr ("read-eventlog: " ++ path ++ ": " ++ err) >> exitFailure
    Right (EventLog _ (Data evs), merr) -> do
      -- show forces every field of every event
      let !forced = foldl' (\n e -> n + length (show (evSpec e))) 0 evs
          c = foldl' count (Counts 0 0 0 0 0 0 0 Set.empty) evs
      case merr of
        Just err -> hPutStrLn stderr ("read-eventlog: " ++ path ++ ": " ++ err) >> exitFailure
        Nothing -> return ()
      putStrLn ("events " ++ show (nEvents c) ++ " (rtslab's own: " ++ show (nUnknown c)
                ++ "; " ++ show forced ++ " characters shown); GCs: minor " ++ show (nMinor c)
                ++ ", major " ++ show (nMajor c) ++ "; threads: created " ++ show (nCreated c)
                ++ ", finished " ++ show (nFinished c) ++ ", migrated " ++ show (nMigrated c)
                ++ "; capabilities " ++ show (Set.size (caps c)))
