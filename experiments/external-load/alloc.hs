-- GHC's side of experiments/external-load: smp/par-alloc's loop in Haskell. Two workers,
-- each N iterations that allocate a cons cell and store it in the worker's own IORef (so it
-- escapes, and GHC cannot optimise the allocation away), summing the head it reads back;
-- main joins them through MVars and checks the sums.
--   alloc N +RTS -N2
import Control.Concurrent
import Control.Monad
import Data.IORef
import System.Environment
import System.Exit

worker :: Int -> IO Int
worker n = do
  cell <- newIORef []
  let loop :: Int -> Int -> IO Int
      loop 0 acc = return acc
      loop i acc = do
        writeIORef cell $! [i]
        v <- readIORef cell
        loop (i - 1) $! acc + head v
  loop n 0

main :: IO ()
main = do
  [arg] <- getArgs
  let n = read arg :: Int
  dones <- forM [1, 2 :: Int] $ \_ -> do
    m <- newEmptyMVar
    _ <- forkIO (worker n >>= putMVar m)
    return m
  sums <- mapM takeMVar dones
  let want = n * (n + 1) `div` 2
  unless (all (== want) sums) $ do
    putStrLn ("wrong: " ++ show sums ++ ", want " ++ show want)
    exitFailure
  putStrLn ("alloc: 2 workers x " ++ show n ++ ", sums " ++ unwords (map show sums))
